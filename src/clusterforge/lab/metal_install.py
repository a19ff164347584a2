"""Bring one bare-metal server of the lab from blank (or from anything) to installed, through its BMC.

``install`` is the whole bring-up, in order:

1. the lab's VM for the server (``metal_vm.define_vm``: blank disk, NICs on the provisioning bridge first,
   then the planned NICs' lab bridges) and its Redfish BMC on the server's oob address (``bmc_emulator``);
2. the system's inventory read through Redfish (model, serial, BIOS version, NICs with MACs) into the
   as-built record ``.lab/<lab>/metal-install/<server>.json``;
3. the declared BIOS attributes (Bios/Settings: they apply at the next reset, which the power-on is);
4. the boot served (``bootnet``: DHCP reservation for the boot NIC's as-built MAC, iPXE), one-time UEFI
   network boot, power on (a reset when it was on: a re-image). Two methods:

   * ``image`` (the default; what Ironic's direct deploy and MAAS do): the server's disk image is made
     here first (``os_image``: the profile's OS tree, golden layer included, plus this server's identity,
     NIC names and addresses, SSH host key), the deploy ramdisk (``deploy_ramdisk``) writes and checks it
     and powers the server off; the server is then booted from its disk through the BMC;
   * ``debian-installer``: Debian's netboot installer with the preseed rendered from the plan (it needs a
     mirror that serves the installer's udebs);
5. the wait for the install (``netinstall``, bounded), then SSH on the management address.

The record says ``installing`` from step 4 until the SSH check passes, then ``installed``; anything that
stops in between (timeout, power lost, Ctrl-C) leaves ``installing``, and the next run installs again:
a half-installed disk is never handed to the roles. Errors are one line naming the server.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from clusterforge.plan import Device
from clusterforge.render.deploy import manifest_sha256
from clusterforge.render.netboot_values import HttpEndpoint
from clusterforge.render.preseed import HostNic, HostRoute, InstallTarget, install_target

from . import bootnet, netinstall
from .metal_topology import MetalHost
from .util import LabError, Progress, _noop, lab_dir, write_json_atomic

__all__ = ["InstallRequest", "install", "record", "is_installed", "remove", "record_path", "METHODS"]

INSTALL_TIMEOUT_S = 1800.0
SSH_TIMEOUT_S = 600.0
POWER_OFF_WAIT_S = 120.0  # the deploy ramdisk powers the server off after its callback
BMC_BUSY_S = 300.0  # how long a BMC that does not answer is asked again during an install (a BMC stalled
# 73 s here while QEMU flushed a 7 GB disk image at power-off; real BMCs go silent for minutes while they reset)
T = TypeVar("T")
METHODS = ("image", "debian-installer")


@dataclass(frozen=True)
class InstallRequest:
    lab: str
    device: Device  # the planned server
    host: MetalHost  # its NICs and routes as the lab cables them
    bmc_url: str
    bmc_username: str
    bmc_password: str
    bmc_address_cidr: str  # the BMC emulator's address on the oob bridge
    bmc_gateway: str | None
    oob_bridge: str
    bios: Mapping[str, object]
    provisioning: bootnet.ProvisioningNet
    ssh_public_key: str
    ssh_identity: Path
    host_proxy: HttpEndpoint | None  # the lab's apt proxy on the management plane
    time_servers: tuple[str, ...] = ()  # NTP servers the installed host asks (the lab's: lab.timeserve)
    timeout_s: float = INSTALL_TIMEOUT_S
    method: str = "image"  # image | debian-installer (model.management.Management.install)
    image: str | None = None  # the golden image (lab.image) the server's software profile boots, if any


def record_path(lab: str, server: str) -> Path:
    return lab_dir(lab) / "metal-install" / f"{server}.json"


def record(lab: str, server: str) -> dict[str, Any]:
    try:
        return json.loads(record_path(lab, server).read_text())
    except (OSError, ValueError):
        return {}


def _write(lab: str, server: str, **changes: Any) -> dict[str, Any]:
    data = {**record(lab, server), **changes}
    write_json_atomic(record_path(lab, server), data)
    return data


def is_installed(lab: str, server: str) -> bool:
    """Installed and answering SSH with the host key its install reported."""
    if record(lab, server).get("status") != "installed":
        return False
    conf = netinstall.ssh_conf_dir(lab) / f"{server}.conf"
    if not conf.exists():
        return False
    import subprocess

    try:
        done = subprocess.run(["ssh", "-F", str(conf), server, "true"], capture_output=True, timeout=40,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _target(req: InstallRequest, boot_mac: str, macs: Mapping[str, str]) -> InstallTarget:
    nics = tuple(HostNic(n.name, macs[n.name], n.ip, n.mtu,
                         next((r.via for r in req.host.routes if r.dst == "default" and r.dev == n.name), None))
                 for n in req.host.nics)  # fmt: skip
    routes = tuple(HostRoute(r.dst, r.via, r.dev, r.metric) for r in req.host.routes
                   if r.dst != "default" and r.via and r.dev)  # fmt: skip
    return install_target(
        req.device, boot_mac=boot_mac, nics=nics, routes=routes, ssh_key=req.ssh_public_key,
        boot_server=req.provisioning.boot_server, syslog_port=bootnet.SYSLOG_PORT,
        installer_proxy=req.provisioning.installer_proxy, host_proxy=req.host_proxy,
        time_servers=req.time_servers,
    )  # fmt: skip


def _machine(req: InstallRequest, progress: Progress):
    """The server's VM (created blank once) and its BMC (``lab.metal_server``); returns a Redfish client."""
    from clusterforge.baremetal.redfish import connect
    from clusterforge.baremetal.types import BmcEndpoint

    from .metal_server import start_metal_server

    bootnet.ensure_network(req.provisioning)
    bridges = [bootnet.bridge(req.lab), *(n.bridge for n in req.host.nics)]  # NIC 0 network-boots
    macs = [boot_mac(req.lab, req.host.name), *(n.mac for n in req.host.nics)]
    vm, handle = start_metal_server(req.lab, req.host.name, nic_bridges=bridges, oob_bridge=req.oob_bridge,
                                    bmc_cidr=req.bmc_address_cidr, username=req.bmc_username,
                                    password=req.bmc_password, gateway=req.bmc_gateway, macs=macs)
    progress(req.host.name, f"BMC answers at {handle.url} (VM {vm.domain}, {vm.accel})")
    return connect(BmcEndpoint(server=req.host.name, url=handle.url, username=req.bmc_username,
                               password=req.bmc_password, ca_file=handle.ca_file))


def _deploy(req: InstallRequest, target: InstallTarget, disks: tuple[int, ...], progress: Progress) -> bootnet.Deploy:
    """The image method's boot: the OS tree of the server's profile, its disk image, the deploy ramdisk."""
    from clusterforge.render.host_os import host_files

    from . import deploy_ramdisk, os_image
    from .aptproxy import apt_conf
    from .image import layers_for
    from .metal_vm import DISK_GB

    tree = os_image.os_tree(layers_for(req.image), progress=progress)
    ramdisk = deploy_ramdisk.ensure_ramdisk(tree)
    disk_bytes = disks[0] if disks else DISK_GB << 30  # a BMC without SimpleStorage: the lab VM's disk
    _, host_key = os_image.host_key(req.lab, req.host.name)
    proxy = apt_conf(req.host_proxy.host, req.host_proxy.port) if req.host_proxy else None
    files = host_files(target, host_key_public=host_key, mgmt_ip=req.device.management_ip, proxy_conf=proxy)
    image = os_image.host_image(req.lab, req.host.name, tree, files, disk_bytes=disk_bytes,
                                esp_mib=target.disk.esp_mib, progress=progress)
    return bootnet.Deploy(ramdisk=ramdisk, image_dir=os_image.image_dir(req.lab, req.host.name), image=image)


def _patient(call: Callable[[], T], budget_s: float = BMC_BUSY_S) -> T:
    """A BMC call during an install, retried while the BMC does not answer (a busy BMC: sushy-tools on a loaded
    machine, a real one while it resets) for up to ``budget_s``; other refusals, and a BMC still silent after
    that, raise its one-line ``BmcError``. Only for calls that are safe to repeat."""
    from clusterforge.baremetal.types import BmcError

    deadline = time.monotonic() + budget_s
    while True:
        try:
            return call()
        except BmcError as exc:
            if exc.kind != "unreachable" or time.monotonic() > deadline:
                raise
            time.sleep(3)


def _boot_disk(req: InstallRequest, bmc, progress: Progress) -> None:
    """After the deploy ramdisk's callback: wait for its power-off (forced after a while), boot the disk."""
    deadline = time.monotonic() + POWER_OFF_WAIT_S
    while _patient(bmc.power_state) != "Off":
        if time.monotonic() > deadline:
            progress(req.host.name, f"install: still on {POWER_OFF_WAIT_S:.0f} s after the image was written;"
                                    " powering it off through the BMC")
            _patient(lambda: bmc.power("off"))
            break
        time.sleep(2)
    _patient(lambda: bmc.boot_once("hdd"))
    _patient(lambda: bmc.power("on"))
    progress(req.host.name, "install: booting the installed disk")


def _network_install(req: InstallRequest, bmc, target: InstallTarget, deploy: bootnet.Deploy | None,
                     progress: Progress) -> str:
    """Arm the boot, network-boot the server, wait for the install; returns the installed system's host key.
    The image method then boots the written disk (recorded as ``written`` first, so a run stopped after
    this point boots it again instead of writing it)."""
    name = req.host.name
    bootnet.up(req.provisioning, target, deploy)
    offset = netinstall.events_offset(req.lab)
    was_on = bmc.power_state() == "On"
    bmc.boot_once("pxe", uefi=True)
    bmc.power("reset" if was_on else "on")
    progress(name, "one-time UEFI network boot set; " + ("reset" if was_on else "powered on"))
    key = netinstall.wait_installed(req.lab, name, timeout_s=req.timeout_s, offset=offset,
                                    powered=lambda: _patient(bmc.power_state) == "On", progress=progress)
    if deploy is None:  # the installed disk from now on (the lab's BMC keeps a Once network boot as Continuous)
        _patient(lambda: bmc.boot_once("hdd"))
        return key
    if key.split()[:2] != deploy.image.host_key.split()[:2]:
        raise netinstall.InstallError(f"{name}: the deploy ramdisk reported another SSH host key than its"
                                      " image's; the next `up` installs it again")
    _write(req.lab, name, written=manifest_sha256(deploy.image))
    _boot_disk(req, bmc, progress)
    return key


def boot_mac(lab: str, server: str) -> str:
    from .metal_topology import vm_mac

    return vm_mac(lab, server, "boot")


def install(req: InstallRequest, progress: Progress = _noop) -> dict[str, Any]:
    """Install the server (again); returns its record. Raises a one-line ``LabError`` naming it."""
    name = req.host.name
    t0 = time.monotonic()
    bmc = _machine(req, progress)
    try:
        inventory = bmc.inventory()
        by_mac = {n.mac.lower(): n.id for n in inventory.nics if n.mac}
        pxe_mac = boot_mac(req.lab, name)
        missing = [m for m in [pxe_mac, *(n.mac for n in req.host.nics)] if m not in by_mac]
        if missing:
            raise LabError(f"{name}: the BMC reports no NIC with MAC {', '.join(missing)}"
                           f" (it reports {', '.join(sorted(by_mac)) or 'none'})")
        prior = record(req.lab, name)
        _write(req.lab, name, status="installing", asbuilt=inventory.to_dict(), started_at=time.time())
        progress(name, f"inventory: {inventory.manufacturer} {inventory.model}, serial {inventory.serial},"
                       f" BIOS {inventory.bios_version}, {len(inventory.nics)} NICs")
        change = bmc.apply_bios(dict(req.bios))
        if change.sent:
            progress(name, f"BIOS: {', '.join(sorted(change.sent))} set (apply at the next reset)")
        target = _target(req, pxe_mac, {n.name: n.mac for n in req.host.nics})
        if req.method not in METHODS:
            raise LabError(f"{name}: install method {req.method!r} is not one of {', '.join(METHODS)}")
        deploy = _deploy(req, target, inventory.disk_bytes, progress) if req.method == "image" else None
        image_digest = manifest_sha256(deploy.image) if deploy is not None else None
        try:
            if deploy is not None and prior.get("status") == "installing" and prior.get("written") == image_digest:
                # the last run's ramdisk wrote and checked this very image, then the run stopped (a BMC that
                # stopped answering, Ctrl-C): boot the disk rather than write it again
                progress(name, "install: the disk holds this image (written and checked by the last run);"
                               " booting it")
                key = deploy.image.host_key
                _boot_disk(req, bmc, progress)
            else:
                _write(req.lab, name, written=None)
                key = _network_install(req, bmc, target, deploy, progress)
        except BaseException:
            _stop_installer(bmc)
            raise
        netinstall.ssh_entry(req.lab, name, req.device.management_ip or "", key, req.ssh_identity)
        installed_s = time.monotonic() - t0
        try:
            netinstall.wait_ssh(req.lab, name, timeout_s=SSH_TIMEOUT_S, progress=progress)
        except netinstall.InstallError as exc:
            _write(req.lab, name, written=None)  # the image did not come up: the next run writes it again
            raise netinstall.InstallError(f"{exc}; the next `up` installs it again") from None
        data = _write(req.lab, name, status="installed", host_key=key, finished_at=time.time(),
                      install_seconds=round(installed_s, 1), reachable_seconds=round(time.monotonic() - t0, 1))
        progress(name, f"installed and reachable over SSH in {time.monotonic() - t0:.0f} s")
        return data
    finally:
        bmc.close()


def _stop_installer(bmc) -> None:
    """A failed or interrupted install: power the server off, so no installer keeps writing its disk."""
    with contextlib.suppress(Exception):  # the original error is the one to report
        bmc.power("off")


def remove(lab: str, server: str) -> None:
    """Power the VM off and remove it, its BMC and its records (``destroy``); the provisioning network
    goes with the last bare-metal server of the lab."""
    from .metal_server import stop_metal_server

    stop_metal_server(lab, server)
    netinstall.remove_ssh_entry(lab, server)
    record_path(lab, server).unlink(missing_ok=True)
    from .os_image import forget_server

    forget_server(lab, server)  # its disk image and host key
    if bootnet.forget(lab, server) == 0:  # the last one: the provisioning network and the lab's libvirtd go too
        from .metal_debris import teardown_metal

        bootnet.down(lab)
        teardown_metal(lab)
