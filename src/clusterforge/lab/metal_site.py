"""The lab as the site its bare-metal servers stand in (``baremetal.install.Site``): each server a VM with a
blank disk behind a Redfish BMC emulator (``metal_server``), its boot NIC's MAC the VM's own
(``metal_topology.vm_mac``), the provisioning bridge and boot namespace (``bootnet``), the OS tree made from
the lab's cached rootfs and the profile's golden image layer (``rootfs``, ``image``)."""

from __future__ import annotations

from pathlib import Path

from clusterforge.baremetal import bootnet as boot
from clusterforge.baremetal.install import InstallRequest
from clusterforge.baremetal.types import BmcEndpoint
from clusterforge.render.netboot_values import HttpEndpoint
from clusterforge.render.preseed import InstallTarget

from . import bootnet
from .metal_vm import DISK_GB
from .util import LabError, Progress

__all__ = ["LabSite"]


class LabSite:
    blank_disk_bytes = DISK_GB << 30  # the lab VM's disk

    def boot_mac(self, lab: str, server: str) -> str:
        from .metal_topology import vm_mac

        return vm_mac(lab, server, "boot")

    def start(self, req: InstallRequest, progress: Progress) -> BmcEndpoint:
        from .metal_server import start_metal_server

        bootnet.ensure_network(req.provisioning)
        bridges = [bootnet.bridge(req.lab), *(n.bridge for n in req.host.nics)]  # NIC 0 network-boots
        macs = [self.boot_mac(req.lab, req.host.name), *(n.mac for n in req.host.nics)]
        vm, handle = start_metal_server(req.lab, req.host.name, nic_bridges=bridges, oob_bridge=req.oob_bridge,
                                        bmc_cidr=req.bmc_address_cidr, username=req.bmc_username,
                                        password=req.bmc_password, gateway=req.bmc_gateway, macs=macs)
        progress(req.host.name, f"BMC answers at {handle.url} (VM {vm.domain}, {vm.accel})")
        return BmcEndpoint(server=req.host.name, url=handle.url, username=req.bmc_username,
                           password=req.bmc_password, ca_file=handle.ca_file)

    def os_tree(self, image: str | None, progress: Progress) -> Path:
        from clusterforge.baremetal.os_image import os_tree

        from .image import layers_for
        from .rootfs import current_stamp, rootfs_path

        base = rootfs_path()
        stamp = current_stamp(base)
        if not stamp:
            raise LabError(f"the lab's rootfs {base} is not built (scripts/lab-rootfs.sh)")
        return os_tree(base, stamp.get("hash"), layers_for(image), progress=progress)

    def proxy_conf(self, proxy: HttpEndpoint) -> str:
        from .aptproxy import apt_conf

        return apt_conf(proxy.host, proxy.port)

    def serve_boot(self, net: boot.ProvisioningNet, target: InstallTarget, deploy: boot.Deploy | None) -> None:
        bootnet.up(net, target, deploy)

    def release(self, lab: str, server: str) -> None:
        from .metal_server import stop_metal_server

        stop_metal_server(lab, server)

    def close(self, lab: str) -> None:
        from .metal_debris import teardown_metal

        bootnet.down(lab)
        teardown_metal(lab)
