"""Network namespaces, one per lab host (``ip netns``, bind-mounted under /run/netns)."""

from __future__ import annotations

from pathlib import Path

from .names import netns_prefix
from .util import run

NETNS_DIR = Path("/run/netns")


def ns_path(name: str) -> Path:
    return NETNS_DIR / name


def exists(name: str) -> bool:
    return ns_path(name).exists()


def ensure(name: str) -> bool:
    """Create the namespace (with loopback up); True when it was created."""
    if exists(name):
        return False
    run(["ip", "netns", "add", name])
    run(["ip", "-n", name, "link", "set", "lo", "up"])
    return True


def delete(name: str) -> None:
    if exists(name):
        run(["ip", "netns", "delete", name], check=False)


def list_all() -> list[str]:
    out = run(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def list_lab(lab: str) -> list[str]:
    pre = netns_prefix(lab)
    return [n for n in list_all() if n.startswith(pre)]


def sysctl(name: str, **values: str | int) -> None:
    """Set sysctls inside the namespace, e.g. ``sysctl(ns, **{"net.ipv4.ip_forward": 1})``."""
    args = [f"{k}={v}" for k, v in values.items()]
    run(["ip", "netns", "exec", name, "sysctl", "-q", "-w", *args])
