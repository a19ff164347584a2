"""What the checks read from a host: ``HostFacts`` runs the commands once per host through a
testinfra ``Host`` and caches the answers; the pure parsers live in ``_parsers``, which the check
modules import directly.

Parsers never decide pass/fail; the check modules compare their output with host_vars.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from clusterforge.verify.hosts._parsers import (
    Link,
    Mount,
    count_nvswitches,
    parse_ip_addr_json,
    parse_nvidia_smi_csv,
    parse_proc_modules,
    parse_proc_mounts,
)

__all__ = ["HostFacts"]


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
