"""Bring one bare-metal server from blank (or from anything) to installed, through its BMC.

``install`` is the whole bring-up, in order; where the server stands (its machine, its BMC, the network its
boot NIC is on) is a ``Site`` (the lab's: ``lab.metal_site.LabSite``, a VM behind a Redfish BMC emulator):

1. the server and its BMC answering (``Site.start``; in the lab: its VM with a blank disk, NICs on the
   provisioning bridge first, then the planned NICs' lab bridges, and its BMC on the server's oob address);
2. the system's inventory read through Redfish (model, serial, BIOS version, NICs with MACs) into the
   as-built record ``.lab/<lab>/metal-install/<server>.json``;
3. the declared BIOS attributes (Bios/Settings: they apply at the next reset, which the power-on is);
4. the boot served (``Site.serve_boot``, ``bootnet``: DHCP reservation for the boot NIC's as-built MAC,
   iPXE), one-time UEFI network boot, power on (a reset when it was on: a re-image). Two methods:

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
from typing import Any, Protocol, TypeVar

from clusterforge.hostio import HostError, Progress, quiet, state_dir, write_json_atomic
from clusterforge.plan import Device
from clusterforge.render.deploy import manifest_sha256
from clusterforge.render.netboot_values import HttpEndpoint
from clusterforge.render.preseed import HostNic, HostRoute, InstallTarget, install_target

from . import bootnet, netinstall
from .host import MetalHost
from .types import BmcEndpoint

__all__ = ["InstallRequest", "Site", "install", "record", "is_installed", "remove", "record_path", "METHODS"]

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
    host: MetalHost  # its NICs and routes as they are cabled
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


class Site(Protocol):
    """Where the servers stand, as an install needs it besides their BMCs: the server and its BMC answering,
    its boot NIC, the OS tree its disk image starts from, the boot services on its boot network. The lab
    emulates one (``lab.metal_site.LabSite``)."""

    blank_disk_bytes: int  # the disk an image is made for when the BMC reports no storage

    def boot_mac(self, lab: str, server: str) -> str:
        """The MAC of the NIC the server network-boots from."""
        ...

    def start(self, req: InstallRequest, progress: Progress) -> BmcEndpoint:
        """The server (powered off when new) and its BMC, answering; its boot network up."""
        ...

    def os_tree(self, image: str | None, progress: Progress) -> Path:
        """The OS tree the server's disk image is made of (``image``: the golden image its profile boots)."""
        ...

    def proxy_conf(self, proxy: HttpEndpoint) -> str:
        """apt's configuration for the installed system's package proxy."""
        ...

    def serve_boot(self, net: bootnet.ProvisioningNet, target: InstallTarget, deploy: bootnet.Deploy | None) -> None:
        """Arm the server's network boot (``bootnet.serve`` on the site's boot network)."""
        ...

    def release(self, lab: str, server: str) -> None:
        """Power the server off and give it back (in the lab: its VM and BMC removed)."""
        ...

    def close(self, lab: str) -> None:
        """The last server is gone: the boot network and what served it go too."""
        ...


def record_path(lab: str, server: str) -> Path:
    return state_dir(lab) / "metal-install" / f"{server}.json"


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


def _machine(req: InstallRequest, site: Site, progress: Progress):
    """The server and its BMC (``Site.start``); returns a Redfish client."""
    from .redfish import connect

    return connect(site.start(req, progress))


def _deploy(req: InstallRequest, site: Site, target: InstallTarget, disks: tuple[int, ...],
            progress: Progress) -> bootnet.Deploy:
    """The image method's boot: the OS tree of the server's profile, its disk image, the deploy ramdisk."""
    from clusterforge.render.host_os import host_files

    from . import deploy_ramdisk, os_image

    tree = site.os_tree(req.image, progress)
    ramdisk = deploy_ramdisk.ensure_ramdisk(tree)
    disk_bytes = disks[0] if disks else site.blank_disk_bytes
    _, host_key = os_image.host_key(req.lab, req.host.name)
    proxy = site.proxy_conf(req.host_proxy) if req.host_proxy else None
    files = host_files(target, host_key_public=host_key, mgmt_ip=req.device.management_ip, proxy_conf=proxy)
    image = os_image.host_image(req.lab, req.host.name, tree, files, disk_bytes=disk_bytes,
                                esp_mib=target.disk.esp_mib, progress=progress)
    return bootnet.Deploy(ramdisk=ramdisk, image_dir=os_image.image_dir(req.lab, req.host.name), image=image)


def _patient(call: Callable[[], T], budget_s: float = BMC_BUSY_S) -> T:
    """A BMC call during an install, retried while the BMC does not answer (a busy BMC: sushy-tools on a loaded
    machine, a real one while it resets) for up to ``budget_s``; other refusals, and a BMC still silent after
    that, raise its one-line ``BmcError``. Only for calls that are safe to repeat."""
    from .types import BmcError

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


def _network_install(req: InstallRequest, site: Site, bmc, target: InstallTarget, deploy: bootnet.Deploy | None,
                     progress: Progress) -> str:
    """Arm the boot, network-boot the server, wait for the install; returns the installed system's host key.
    The image method then boots the written disk (recorded as ``written`` first, so a run stopped after
    this point boots it again instead of writing it)."""
    name = req.host.name
    site.serve_boot(req.provisioning, target, deploy)
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


def install(req: InstallRequest, site: Site, progress: Progress = quiet) -> dict[str, Any]:
    """Install the server (again); returns its record. Raises a one-line ``HostError`` naming it."""
    name = req.host.name
    t0 = time.monotonic()
    bmc = _machine(req, site, progress)
    try:
        inventory = bmc.inventory()
        by_mac = {n.mac.lower(): n.id for n in inventory.nics if n.mac}
        pxe_mac = site.boot_mac(req.lab, name)
        missing = [m for m in [pxe_mac, *(n.mac for n in req.host.nics)] if m not in by_mac]
        if missing:
            raise HostError(f"{name}: the BMC reports no NIC with MAC {', '.join(missing)}"
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
            raise HostError(f"{name}: install method {req.method!r} is not one of {', '.join(METHODS)}")
        deploy = _deploy(req, site, target, inventory.disk_bytes, progress) if req.method == "image" else None
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
                key = _network_install(req, site, bmc, target, deploy, progress)
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


def remove(lab: str, server: str, site: Site) -> None:
    """Power the server off and give it back, with its records (``destroy``); the boot network goes with the
    last bare-metal server of the lab."""
    from .os_image import forget_server

    site.release(lab, server)
    netinstall.remove_ssh_entry(lab, server)
    record_path(lab, server).unlink(missing_ok=True)
    forget_server(lab, server)  # its disk image and host key
    if bootnet.forget(lab, server) == 0:  # the last one
        site.close(lab)
