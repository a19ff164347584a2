"""The lab's bare-metal server: a QEMU virtual machine with UEFI firmware (OVMF), a blank disk and NICs on lab bridges.

``define_vm`` creates (once) ``.lab/<lab>/metal/<server>/``: ``disk.qcow2`` (blank), ``OVMF_VARS.fd`` (the VM's own
copy of the firmware's variable store) and the libvirt domain ``cf-<lab>.<server>`` on the lab's private libvirtd
(lab/libvirtd.py), powered off. Its BMC (lab/bmc_emulator.py) powers it on and sets its boot device; a
network boot is a real OVMF/iPXE PXE boot on the first NIC's bridge. The serial console goes to ``console.log``.

Acceleration: KVM where OVMF runs under it, else QEMU's TCG (see lab/kvm_probe.py: on this machine's nested
KVM, OVMF's first instructions fail with "KVM internal error ... emulation failure", so TCG is what runs here).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import uuid as uuidlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from . import libvirtd
from .kvm_probe import ovmf_runs_under_kvm
from .util import LabError, lab_dir, run

__all__ = ["OVMF_CODE", "OVMF_VARS", "VmNic", "MetalVm", "vm_dir", "domain_name", "mac_address", "define_vm",
           "remove_vm", "blank_disk", "vm_state", "DISK_GB"]

DISK_GB = 16  # the lab VM's disk (GiB)
OVMF_CODE = Path("/usr/share/OVMF/OVMF_CODE_4M.fd")
OVMF_VARS = Path("/usr/share/OVMF/OVMF_VARS_4M.fd")
_BRIDGE_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


@dataclass(frozen=True)
class VmNic:
    bridge: str  # a root-namespace Linux bridge
    mac: str


@dataclass(frozen=True)
class MetalVm:
    lab: str
    server: str
    domain: str
    uuid: str
    disk: Path
    nvram: Path
    console_log: Path
    nics: tuple[VmNic, ...]
    accel: str  # kvm | tcg


def vm_dir(lab: str, server: str) -> Path:
    return lab_dir(lab) / "metal" / server


def domain_name(lab: str, server: str) -> str:
    return f"cf-{lab}.{server}"


def mac_address(lab: str, server: str, index: int) -> str:
    """Stable locally administered MAC (QEMU's 52:54:00 prefix) for NIC ``index`` of the server."""
    h = hashlib.sha256(f"{lab}\0{server}\0{index}".encode()).digest()
    return "52:54:00:" + ":".join(f"{b:02x}" for b in h[:3])


def _domain_xml(vm: MetalVm, memory_mib: int, vcpus: int) -> str:
    nics = "".join(
        f"""
    <interface type='bridge'>
      <source bridge={quoteattr(n.bridge)}/>
      <mac address='{n.mac}'/>
      <model type='virtio'/>
    </interface>""" for n in vm.nics
    )
    cpu = "<cpu mode='host-passthrough' check='none'/>" if vm.accel == "kvm" else ""
    return f"""<domain type='{"kvm" if vm.accel == "kvm" else "qemu"}'>
  <name>{vm.domain}</name>
  <uuid>{vm.uuid}</uuid>
  <description>clusterforge lab {vm.lab}: bare-metal server {vm.server}</description>
  <memory unit='MiB'>{memory_mib}</memory>
  <vcpu>{vcpus}</vcpu>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <loader readonly='yes' type='pflash'>{OVMF_CODE}</loader>
    <nvram>{vm.nvram}</nvram>
  </os>
  <features><acpi/><apic/></features>
  {cpu}
  <on_reboot>restart</on_reboot>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file={quoteattr(str(vm.disk))}/>
      <target dev='vda' bus='virtio'/>
      <boot order='1'/>
    </disk>{nics}
    <serial type='file'>
      <source path={quoteattr(str(vm.console_log))} append='on'/>
      <target port='0'/>
    </serial>
    <console type='file'>
      <source path={quoteattr(str(vm.console_log))} append='on'/>
      <target type='serial' port='0'/>
    </console>
    <video><model type='none'/></video>
    <memballoon model='none'/>
  </devices>
</domain>
"""


def _connect(lab: str):
    import libvirt  # libvirt-python (the `lab` extra)

    libvirt.registerErrorHandler(lambda *_: None, None)
    return libvirt.open(libvirtd.ensure(lab))


def blank_disk(lab: str, server: str, size_gb: int = DISK_GB) -> Path:
    """A new, empty qcow2 disk in place of the server's (the VM must be off): a server that arrives blank."""
    disk = vm_dir(lab, server) / "disk.qcow2"
    disk.parent.mkdir(parents=True, exist_ok=True)
    tmp = disk.with_suffix(".qcow2.new")
    run(["qemu-img", "create", "-q", "-f", "qcow2", tmp, f"{size_gb}G"])
    tmp.replace(disk)
    return disk


def define_vm(lab: str, server: str, bridges: Sequence[str], *, macs: Sequence[str] | None = None,
              disk_gb: int = DISK_GB, memory_mib: int = 2048, vcpus: int = 2, accel: str = "auto") -> MetalVm:
    """Define the server's VM (idempotent: an existing disk and variable store are kept), powered off if new."""
    if not bridges:
        raise LabError(f"{server}: a lab VM needs at least one NIC bridge")
    for br in bridges:
        if not br or len(br) > 15 or set(br) - _BRIDGE_OK or not Path(f"/sys/class/net/{br}/bridge").is_dir():
            raise LabError(f"{server}: {br!r} is not a bridge in this network namespace")
    macs = list(macs or [mac_address(lab, server, i) for i in range(len(bridges))])
    if len(macs) != len(bridges):
        raise LabError(f"{server}: {len(bridges)} bridges but {len(macs)} MAC addresses")
    for tool, path in (("qemu-system-x86_64", None), ("qemu-img", None), ("OVMF", OVMF_CODE), ("OVMF", OVMF_VARS)):
        if (path is None and shutil.which(tool) is None) or (path is not None and not path.is_file()):
            raise LabError(f"{server}: {path or tool} not found (scripts/setup.sh installs qemu-system-x86 and ovmf)")
    where = vm_dir(lab, server)
    where.mkdir(parents=True, exist_ok=True)
    disk, nvram = where / "disk.qcow2", where / "OVMF_VARS.fd"
    if not disk.exists():
        blank_disk(lab, server, disk_gb)
    if not nvram.exists():
        shutil.copyfile(OVMF_VARS, nvram)
    chosen = accel if accel != "auto" else ("kvm" if ovmf_runs_under_kvm() else "tcg")
    vm = MetalVm(lab=lab, server=server, domain=domain_name(lab, server),
                 uuid=str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"clusterforge:{lab}:{server}")), disk=disk,
                 nvram=nvram, console_log=where / "console.log",
                 nics=tuple(VmNic(b, m) for b, m in zip(bridges, macs, strict=True)), accel=chosen)
    conn = _connect(lab)
    try:
        if vm.domain in conn.listDefinedDomains() or any(d.name() == vm.domain for d in conn.listAllDomains()):
            return vm  # defined: left as it is (the boot order its BMC set, its power state)
        conn.defineXML(_domain_xml(vm, memory_mib, vcpus))
    finally:
        conn.close()
    return vm


def vm_state(lab: str, server: str) -> str:
    """running | off | absent."""
    conn = _connect(lab)
    try:
        try:
            dom = conn.lookupByName(domain_name(lab, server))
        except Exception:  # noqa: BLE001 - libvirtError: no such domain
            return "absent"
        return "running" if dom.isActive() else "off"
    finally:
        conn.close()


def remove_vm(lab: str, server: str, *, keep_files: bool = False) -> bool:
    """Power the VM off, undefine it, delete its disk and variable store. True when there was one."""
    import libvirt

    found = False
    if libvirtd.pid(lab):
        conn = _connect(lab)
        try:
            with contextlib.suppress(libvirt.libvirtError):
                dom = conn.lookupByName(domain_name(lab, server))
                found = True
                if dom.isActive():
                    dom.destroy()
                dom.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_NVRAM)
        finally:
            conn.close()
    if not keep_files and vm_dir(lab, server).exists():
        shutil.rmtree(vm_dir(lab, server), ignore_errors=True)
        found = True
    return found

