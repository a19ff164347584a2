"""Pure parsers of what a host reports (lsmod, nvidia-smi, lspci, nvcc, containerd, ip, mounts, unit
files, clocks), unit-tested with real samples. They never decide pass/fail: the check modules compare
their output with host_vars; ``_facts.HostFacts`` runs the commands and feeds them."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CONTAINER_KINDS",
    "NVIDIA_PCI_VENDOR",
    "NVSWITCH_PCI_CLASS_PREFIX",
    "Link",
    "Mount",
    "clock_offset_s",
    "containerd_nvidia_runtime",
    "count_nvswitches",
    "has_modprobe_directive",
    "parse_fabric_states",
    "parse_ip_addr_json",
    "parse_nvcc_release",
    "parse_nvidia_smi_csv",
    "parse_proc_modules",
    "parse_proc_mounts",
    "parse_unit_file",
    "split_options",
    "upstream_version",
    "version_matches_pin",
]

# What systemd-detect-virt --container prints for the container managers we meet.
CONTAINER_KINDS = ("systemd-nspawn", "docker", "podman", "lxc", "lxc-libvirt", "rkt", "wsl", "proot", "pouch",
                   "container-other", "oci", "containerd")
NVIDIA_PCI_VENDOR = "0x10de"
NVSWITCH_PCI_CLASS_PREFIX = "0x0680"  # "bridge, other": how NVSwitch ASICs enumerate


# --- kernel ---------------------------------------------------------------------------------------

def parse_proc_modules(text: str) -> set[str]:
    """Module names from /proc/modules (first field of each line)."""
    return {line.split()[0] for line in text.splitlines() if line.strip()}


def has_modprobe_directive(text: str, directive: str) -> bool:
    """True when a non-comment line of modprobe.d text is ``directive`` (whitespace-insensitive)."""
    want = directive.split()
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        if line.split() == want:
            return True
    return False


# --- packages -------------------------------------------------------------------------------------

def upstream_version(package_version: str) -> str:
    """Debian/RPM version without epoch and packaging revision: ``1:535.261.03-1~deb12u1`` -> ``535.261.03``."""
    v = package_version.strip()
    if ":" in v:
        v = v.split(":", 1)[1]
    if "-" in v:
        v = v.rsplit("-", 1)[0]
    return v


def version_matches_pin(installed: str, version: str, branch: str) -> bool:
    """The installed upstream version is the pinned one (or, with no exact pin, of the pinned branch)."""
    if version:
        return installed == version
    return installed.split(".")[0] == str(branch)


# --- GPUs -----------------------------------------------------------------------------------------

def parse_nvidia_smi_csv(text: str, fields: Iterable[str]) -> list[dict[str, str]]:
    """Rows of ``nvidia-smi --query-gpu=... --format=csv,noheader`` as dicts."""
    names = list(fields)
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        values = [v.strip() for v in line.split(",")]
        if len(values) != len(names):
            raise ValueError(f"nvidia-smi row has {len(values)} fields, expected {len(names)}: {line!r}")
        rows.append(dict(zip(names, values, strict=True)))
    return rows


def parse_fabric_states(text: str) -> list[tuple[str, str]]:
    """(State, Status) of each GPU's ``Fabric`` section in ``nvidia-smi -q``."""
    out: list[tuple[str, str]] = []
    in_fabric = False
    state = status = ""
    indent = 0
    for line in text.splitlines():
        stripped = line.strip()
        if stripped == "Fabric":
            in_fabric, state, status = True, "", ""
            indent = len(line) - len(line.lstrip())
            continue
        if in_fabric:
            cur = len(line) - len(line.lstrip())
            if stripped and cur <= indent:
                out.append((state, status))
                in_fabric = False
                continue
            key, _, value = stripped.partition(":")
            if key.strip() == "State":
                state = value.strip()
            elif key.strip() == "Status":
                status = value.strip()
    if in_fabric:
        out.append((state, status))
    return out


def count_nvswitches(vendor_class_lines: str) -> int:
    """NVSwitch count from lines of ``<vendor> <class>`` read from /sys/bus/pci/devices/*."""
    n = 0
    for line in vendor_class_lines.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == NVIDIA_PCI_VENDOR and parts[1].startswith(NVSWITCH_PCI_CLASS_PREFIX):
            n += 1
    return n


# --- CUDA ------------------------------------------------------------------------------------------

def parse_nvcc_release(text: str) -> str | None:
    """``11.8`` from ``Cuda compilation tools, release 11.8, V11.8.89``."""
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else None


# --- container runtime -----------------------------------------------------------------------------

_CRI_RUNTIME_PATHS = (
    ("plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes", "nvidia"),  # containerd 1.x (config v2)
    ("plugins", "io.containerd.cri.v1.runtime", "containerd", "runtimes", "nvidia"),  # containerd 2.x (config v3)
)


def containerd_nvidia_runtime(toml_text: str) -> dict[str, Any] | None:
    """The ``nvidia`` runtime table of a containerd config, or None."""
    try:
        data = tomllib.loads(toml_text)
    except tomllib.TOMLDecodeError:
        return None
    for path in _CRI_RUNTIME_PATHS:
        node: Any = data
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping):
            return dict(node)
    return None


# --- network ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Link:
    name: str
    flags: tuple[str, ...]
    operstate: str
    mtu: int
    addresses: tuple[str, ...] = field(default_factory=tuple)  # "198.18.0.1/31"

    @property
    def is_up(self) -> bool:
        """Administratively up and carrier present (a veth whose peer is down has no LOWER_UP)."""
        return "UP" in self.flags and "LOWER_UP" in self.flags


def parse_ip_addr_json(text: str) -> dict[str, Link]:
    """``ip -j addr show`` -> name -> Link (ifname is the plain name; a VLAN's parent is in ``link``)."""
    links = {}
    for entry in json.loads(text or "[]"):
        addrs = tuple(f"{a['local']}/{a['prefixlen']}" for a in entry.get("addr_info", [])
                      if a.get("family") in ("inet", "inet6") and "local" in a)
        links[entry["ifname"]] = Link(entry["ifname"], tuple(entry.get("flags", ())), entry.get("operstate", ""),
                                      int(entry.get("mtu", 0)), addrs)
    return links


# --- mounts ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mount:
    source: str
    target: str
    fstype: str
    options: tuple[str, ...]


def _unescape_mount_field(value: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), value)


def parse_proc_mounts(text: str) -> list[Mount]:
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            out.append(Mount(_unescape_mount_field(parts[0]), _unescape_mount_field(parts[1]), parts[2],
                             tuple(parts[3].split(","))))
    return out


def split_options(options: str | None) -> list[str]:
    return [o.strip() for o in (options or "").split(",") if o.strip()]


def parse_unit_file(text: str) -> dict[str, dict[str, list[str]]]:
    """systemd unit text -> section -> key -> values (keys may repeat)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        if current is not None and "=" in line:
            key, _, value = line.partition("=")
            current.setdefault(key.strip(), []).append(value.strip())
    return sections


# --- time ------------------------------------------------------------------------------------------

def clock_offset_s(local_before: float, remote: float, local_after: float) -> float:
    """Remote clock minus local clock, reading the remote time as taken at the midpoint of the round trip."""
    return remote - (local_before + local_after) / 2


# --- the host --------------------------------------------------------------------------------------
