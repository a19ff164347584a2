"""One lab bare-metal server with its BMC, in one call: the VM (lab/metal_vm.py) and its Redfish emulator
(lab/bmc_emulator.py) on the oob plane. The seam the bring-up flow uses (docs/CONTRACTS.md, "Bare metal")."""

from __future__ import annotations

from collections.abc import Sequence

from .bmc_emulator import BmcHandle, start_bmc, stop_bmc
from .metal_vm import MetalVm, define_vm, remove_vm

__all__ = ["start_metal_server", "stop_metal_server"]


def start_metal_server(lab: str, server: str, *, nic_bridges: Sequence[str], oob_bridge: str, bmc_cidr: str,
                       username: str, password: str, gateway: str | None = None, port: int = 443,
                       macs: Sequence[str] | None = None, disk_gb: int = 16, memory_mib: int = 2048,
                       vcpus: int = 2) -> tuple[MetalVm, BmcHandle]:
    """The server's VM (defined once, powered off when new, disk blank when new) and its BMC, answering at
    ``https://<bmc_cidr address>``. Idempotent: a second call finds both and changes nothing."""
    vm = define_vm(lab, server, nic_bridges, macs=macs, disk_gb=disk_gb, memory_mib=memory_mib, vcpus=vcpus)
    bmc = start_bmc(vm, address_cidr=bmc_cidr, bridge=oob_bridge, username=username, password=password, port=port,
                    gateway=gateway)
    return vm, bmc


def stop_metal_server(lab: str, server: str, *, keep_disk: bool = False) -> bool:
    """Stop its BMC, power the VM off and remove it (its disk too unless keep_disk). True when anything was there."""
    stopped = stop_bmc(lab, server)
    return remove_vm(lab, server, keep_files=keep_disk) or stopped
