"""What the lab's switches run: the /etc/frr/frr.conf FRR reads inside each router's container.

The rendered copy a SwitchConfig delivers is not what a router runs; the file inside the container is
(the overlay's merged root, which this machine reads directly). ``frr_drift`` compares it with the rendered
frr.conf; ``repair_frr`` writes the rendered one back and restarts FRR in the container so it runs it.
On hardware the same question goes to the NOS over the apply path's connection (its running config).
"""

from __future__ import annotations

from pathlib import Path

from . import overlay
from .sshcfg import command
from .topology import LabTopology
from .util import run

__all__ = ["running_frr_path", "frr_drift", "repair_frr"]


def running_frr_path(lab: str, host: str) -> Path:
    return overlay.root_dir(lab, host) / "etc" / "frr" / "frr.conf"


def _wanted(conf: str) -> str:
    return conf if conf.endswith("\n") else conf + "\n"


def frr_drift(topology: LabTopology) -> dict[str, str]:
    """router -> why the frr.conf it runs is not the rendered one (routers whose container root is mounted)."""
    problems: dict[str, str] = {}
    for host in topology.hosts:
        if host.kind != "router" or host.frr_conf is None:
            continue
        path = running_frr_path(topology.name, host.name)
        if not overlay.is_mounted(overlay.root_dir(topology.name, host.name)):
            continue  # not running: the lab's own drift check names it
        try:
            text = path.read_text()
        except FileNotFoundError:
            problems[host.name] = "/etc/frr/frr.conf is missing inside the container"
            continue
        except OSError as exc:
            problems[host.name] = f"/etc/frr/frr.conf inside the container cannot be read: {exc.strerror}"
            continue
        if text != _wanted(host.frr_conf):
            problems[host.name] = "/etc/frr/frr.conf inside the container (what FRR reads) is not the rendered one"
    return problems


def repair_frr(topology: LabTopology, hosts: list[str]) -> None:
    """Write the rendered frr.conf into each router's container and restart FRR there, so it runs it."""
    for name in hosts:
        host = topology.host(name)
        overlay.write_router_config(host, overlay.root_dir(topology.name, name))
        run(command(topology.name, name, ["systemctl", "restart", "frr"]), timeout=120)
