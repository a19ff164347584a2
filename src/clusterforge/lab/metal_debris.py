"""Take a lab's bare-metal pieces down, also after a crash: BMC emulators, VMs (QEMU), the private libvirtd,
the BMC namespaces and veths, the runtime directories.

Nothing here needs state: emulators and libvirtd are found by their config paths under the lab's directory,
QEMU by its ``-name guest=cf-<lab>.`` argument, namespaces and links by the lab's names (lab/names.py), so a
lab whose Python process died (or whose state file is gone) is cleaned the same way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import bmc_emulator, libvirtd, links, names, netns
from .metal_vm import domain_name
from .util import lab_dir, run

__all__ = ["MetalDebris", "find_metal_debris", "teardown_metal"]


@dataclass
class MetalDebris:
    emulators: list[int] = field(default_factory=list)
    qemus: list[int] = field(default_factory=list)
    daemons: list[int] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.emulators or self.qemus or self.daemons or self.namespaces or self.links)

    def describe(self) -> str:
        parts = [f"{len(v)} {k}" for k, v in vars(self).items() if v]
        return ", ".join(parts) or "nothing"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _qemu_pids(lab: str) -> list[int]:
    marker = f"guest={domain_name(lab, '')}"
    return [int(e.name) for e in Path("/proc").iterdir()
            if e.name.isdigit() and "qemu-system" in (cmd := _cmdline(int(e.name))) and marker in cmd]


def find_metal_debris(lab: str) -> MetalDebris:
    """What of the lab's bare-metal pieces is running or plumbed now."""
    root = lab_dir(lab) / "metal"
    return MetalDebris(
        emulators=[p for p in bmc_emulator.emulator_pids() if str(root) + "/" in _cmdline(p)],
        qemus=_qemu_pids(lab),
        daemons=libvirtd.daemon_pids(libvirtd.home(lab)),
        namespaces=[n for n in netns.list_lab(lab) if n.startswith(names.netns_name(lab, "bmc-"))],
        links=[link["ifname"] for link in links.lab_root_links(lab)
               if str(link.get("ifalias", "")).startswith(names.alias(lab, "bmc/"))],
    )


def _kill(pids: list[int], grace_s: float) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGCONT)
            os.kill(p, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
        time.sleep(0.05)
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)


def teardown_metal(lab: str, *, remove_files: bool = True) -> MetalDebris:
    """Stop and remove every bare-metal piece of ``lab``; returns what was found. Idempotent."""
    found = find_metal_debris(lab)
    _kill(found.emulators, 3.0)
    if found.daemons:
        # the daemon destroys its guests cleanly; QEMU processes it no longer knows are killed below
        with contextlib.suppress(Exception):
            import libvirt

            libvirt.registerErrorHandler(lambda *_: None, None)
            conn = libvirt.open(libvirtd.uri(lab))
            for dom in conn.listAllDomains():
                if dom.name().startswith(domain_name(lab, "")):
                    with contextlib.suppress(libvirt.libvirtError):
                        if dom.isActive():
                            dom.destroy()
                        dom.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_NVRAM)
            conn.close()
    _kill(_qemu_pids(lab), 3.0)
    libvirtd.stop(lab)
    for link in found.links:
        run(["ip", "link", "del", "dev", link], check=False)
    for ns in found.namespaces:
        netns.delete(ns)
    if remove_files and (lab_dir(lab) / "metal").exists():
        shutil.rmtree(lab_dir(lab) / "metal", ignore_errors=True)
    return found
