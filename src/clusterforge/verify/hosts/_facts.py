"""What the checks read from a host: pure parsers (unit-tested with samples) and ``HostFacts``,
which runs the commands once per host through a testinfra ``Host`` and caches the answers.

Parsers never decide pass/fail; the check modules compare their output with host_vars.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CONTAINER_KINDS", "HostFacts", "Link", "Mount", "clock_offset_s", "containerd_nvidia_runtime",
    "count_nvswitches", "has_modprobe_directive", "parse_fabric_states",
    "parse_ip_addr_json", "parse_nvcc_release", "parse_nvidia_smi_csv", "parse_proc_modules",
    "parse_proc_mounts", "parse_unit_file", "split_options", "upstream_version", "version_matches_pin",
]  # fmt: skip

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

class HostFacts:
    """Cached reads of one host through a testinfra Host (one command per fact, not per check)."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self._cache: dict[str, Any] = {}

    def _once(self, key: str, fn):
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    def run(self, command: str, *args: str):
        return self.host.run(command, *args)

    def read(self, path: str) -> str | None:
        """File content, or None when it does not exist or is unreadable."""

        def probe() -> str | None:
            r = self.run("cat -- %s", path)
            return r.stdout if r.rc == 0 else None

        return self._once("read:" + path, probe)

    def exists(self, path: str) -> bool:
        return self._once("exists:" + path, lambda: self.run("test -e %s", path).rc == 0)

    def which(self, command: str) -> str | None:
        def probe() -> str | None:
            r = self.run("command -v %s", command)
            return (r.stdout.strip() or None) if r.rc == 0 else None

        return self._once("which:" + command, probe)

    # virtualisation
    def container(self) -> str | None:
        """The container manager this host runs under (``systemd-nspawn``, ``docker``...), None on metal/VMs."""

        def probe() -> str | None:
            r = self.run("systemd-detect-virt --container")
            kind = r.stdout.strip()
            if r.rc == 0 and kind and kind != "none":
                return kind
            if r.rc in (0, 1):  # the tool answered: not a container
                return None
            marker = self.run(
                "if [ -e /.dockerenv ]; then echo docker; elif [ -e /run/.containerenv ]; then echo podman; "
                "else tr '\\0' '\\n' < /proc/1/environ 2>/dev/null | sed -n 's/^container=//p'; fi"
            )
            return marker.stdout.strip() or None

        return self._once("container", probe)

    # kernel
    def proc_modules(self) -> set[str]:
        return self._once("proc_modules", lambda: parse_proc_modules(self.read("/proc/modules") or ""))

    def modprobe_text(self) -> str:
        """Every /etc/modprobe.d/*.conf, concatenated (empty when none)."""
        return self._once("modprobe", lambda: self.run("cat /etc/modprobe.d/*.conf 2>/dev/null; true").stdout)

    # GPUs
    def gpu_device_nodes(self) -> list[str]:
        def probe() -> list[str]:
            r = self.run("ls -1 /dev/nvidia[0-9]* 2>/dev/null; true")
            return [n for n in r.stdout.split() if re.fullmatch(r"/dev/nvidia\d+", n)]

        return self._once("gpu_nodes", probe)

    def nvidia_smi(self, fields: tuple[str, ...]) -> list[dict[str, str]]:
        """One row per GPU; raises AssertionError carrying nvidia-smi's message when it fails."""

        def probe():
            r = self.run("nvidia-smi --query-gpu=%s --format=csv,noheader,nounits", ",".join(fields))
            if r.rc != 0:
                raise AssertionError(f"nvidia-smi failed (rc {r.rc}): {(r.stderr or r.stdout).strip()[:300]}")
            return parse_nvidia_smi_csv(r.stdout, fields)

        return self._once("smi:" + ",".join(fields), probe)

    def nvidia_smi_q(self) -> str:
        def probe() -> str:
            r = self.run("nvidia-smi -q")
            if r.rc != 0:
                raise AssertionError(f"nvidia-smi -q failed (rc {r.rc}): {(r.stderr or r.stdout).strip()[:300]}")
            return r.stdout

        return self._once("smi-q", probe)

    def nvswitch_count(self) -> int:
        def probe() -> int:
            r = self.run(
                "for d in /sys/bus/pci/devices/*; do "
                "[ -r \"$d/vendor\" ] && [ -r \"$d/class\" ] && echo \"$(cat \"$d/vendor\") $(cat \"$d/class\")\"; "
                "done; true"
            )
            return count_nvswitches(r.stdout)

        return self._once("nvswitch", probe)

    # packages
    def package_manager(self) -> str | None:
        def probe() -> str | None:
            if self.which("dpkg-query"):
                return "dpkg"
            if self.which("rpm"):
                return "rpm"
            return None

        return self._once("pkgmgr", probe)

    def owning_package(self, path: str) -> str | None:
        """The installed package that ships ``path`` (tried as given and with links resolved)."""
        return self._once("owner:" + path, lambda: self._owning_package(path))

    def _owning_package(self, path: str) -> str | None:
        real = self.run("readlink -f -- %s", path).stdout.strip() or path
        candidates = list(dict.fromkeys([path, real]))
        if self.package_manager() == "dpkg":
            for p in candidates:
                # usr-merge: dpkg may record /lib/... for a file reached as /usr/lib/...
                for q in dict.fromkeys([p, re.sub(r"^/usr(/(?:s?bin|lib\w*)/)", r"\1", p)]):
                    r = self.run("dpkg-query -S -- %s", q)
                    if r.rc == 0 and r.stdout.strip():
                        return r.stdout.splitlines()[0].split(":")[0].strip()
        elif self.package_manager() == "rpm":
            for p in candidates:
                r = self.run("rpm -qf --qf '%%{NAME}\\n' -- %s", p)
                if r.rc == 0 and r.stdout.strip():
                    return r.stdout.split()[0]
        return None

    def package_version(self, package: str) -> str | None:
        return self._once("version:" + package, lambda: self._package_version(package))

    def _package_version(self, package: str) -> str | None:
        if self.package_manager() == "dpkg":
            r = self.run("dpkg-query -W -f='${Version}' -- %s", package)
        else:
            r = self.run("rpm -q --qf '%%{VERSION}-%%{RELEASE}' -- %s", package)
        return (r.stdout.strip() or None) if r.rc == 0 else None

    def package_held(self, package: str) -> bool:
        """dpkg selection ``hold`` (what ``apt-mark hold`` sets), or a dnf versionlock entry."""
        return self._once("held:" + package, lambda: self._package_held(package))

    def _package_held(self, package: str) -> bool:
        if self.package_manager() == "dpkg":
            r = self.run("dpkg --get-selections -- %s", package)
            return any(line.split()[-1:] == ["hold"] for line in r.stdout.splitlines() if line.strip())
        r = self.run("dnf versionlock list")
        return r.rc == 0 and any(line.split(":")[-1].startswith(package + "-") or line.startswith(package + "-")
                                 for line in r.stdout.splitlines())

    def shared_library(self, soname: str) -> str | None:
        """Path of a shared library as the dynamic linker finds it (ldconfig cache)."""
        cache = self._once("ldconfig", lambda: self.run("ldconfig -p").stdout)
        for line in cache.splitlines():
            name, _, target = line.partition("=>")
            if name.strip().split(" ")[0] == soname and target.strip():
                return target.strip()
        return None

    # network
    def links(self) -> dict[str, Link]:
        def probe() -> dict[str, Link]:
            r = self.run("ip -j addr show")
            if r.rc != 0:
                raise AssertionError(f"ip -j addr show failed: {r.stderr.strip()[:200]}")
            return parse_ip_addr_json(r.stdout)

        return self._once("links", probe)

    # systemd
    def systemd_running(self) -> bool:
        return self._once("systemd", lambda: self.exists("/run/systemd/system"))

    def unit_state(self, unit: str, what: str) -> str:
        """``systemctl is-active|is-enabled UNIT`` output (``active``, ``enabled``, ``inactive``...)."""
        def probe() -> str:
            r = self.run(f"systemctl {shlex.quote(what)} -- %s", unit)
            return r.stdout.strip() or r.stderr.strip() or f"rc {r.rc}"

        return self._once(f"unit:{what}:{unit}", probe)

    def mount_unit_name(self, path: str) -> str:
        def probe() -> str:
            r = self.run("systemd-escape --path --suffix=mount -- %s", path)
            if r.rc != 0:
                raise AssertionError(f"systemd-escape failed for {path}: {r.stderr.strip()}")
            return r.stdout.strip()

        return self._once("escape:" + path, probe)

    def proc_mounts(self) -> list[Mount]:
        return self._once("mounts", lambda: parse_proc_mounts(self.read("/proc/self/mounts") or ""))
