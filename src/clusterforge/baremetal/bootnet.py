"""Boot serving for network installs: the boot tree, DHCP reservations, dnsmasq and the boot server.

``serve`` writes the boot tree (``boot_dir``: iPXE's loader, the installer's kernel and initrd or the deploy
ramdisk, each server's iPXE script and preseed or disk image) and dnsmasq's config (DHCP reservations only,
TFTP with iPXE), reserves an address for the server's boot NIC beside the other servers', and runs dnsmasq
2.90 and ``bootserve`` (iPXE script, preseed, disk image, the installer's syslog and completion callback)
on the boot interface, each under ``wrap`` (the lab runs them in its boot namespace: ``ip netns exec``).
The network the interface is on, and the apt proxy the installer reaches on the subnet's .1, come from where
the servers stand (the lab's: ``lab.bootnet``).
The installer's files come from Debian's ``debian-installer-12-netboot-amd64`` and iPXE's ``snponly.efi``
from the ``ipxe`` package (scripts/setup.sh installs both).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import netaddr

from clusterforge.hostio import HostError, state_dir, write_atomic, write_json_atomic
from clusterforge.render.deploy import DEPLOY_FILES, MANIFEST, DiskImage, manifest_text, render_deploy_ipxe
from clusterforge.render.dnsmasq import IPXE_LOADER, BootNetwork, Reservation, render_dnsmasq
from clusterforge.render.netboot_values import HttpEndpoint
from clusterforge.render.preseed import InstallTarget, render_ipxe, render_preseed

__all__ = ["HTTP_PORT", "SYSLOG_PORT", "INSTALLER_PROXY_PORT", "ProvisioningNet", "Deploy", "boot_dir", "serve",
           "require_tools", "stop", "stop_services", "alive", "forget", "read_state", "write_state", "forget_state",
           "NETBOOT_DIR", "IPXE_DIR"]

HTTP_PORT = 8080
SYSLOG_PORT = 5514
INSTALLER_PROXY_PORT = 3142  # apt-cacher-ng's port: the apt proxy the installer asks, on the subnet's .1
FIRST_HOST = 10  # .1 the apt proxy, .2 the boot services, .10 on the servers
NETBOOT_DIR = Path("/usr/lib/debian-installer/images/12/amd64/text/debian-installer/amd64")
IPXE_DIR = Path("/usr/lib/ipxe")
_MARK = "clusterforge.baremetal.bootserve"
_SERVER = ".bootserve"  # in a recorded boot server's command line, whichever package ran it (stopped on a restart)


@dataclass(frozen=True)
class ProvisioningNet:
    """Addresses of one provisioning subnet: .1 the apt proxy, .2 the boot services, .10 on the servers."""

    lab: str
    subnet: str  # CIDR, a /24 to /28

    @property
    def _net(self) -> netaddr.IPNetwork:
        return netaddr.IPNetwork(self.subnet)

    @property
    def proxy_ip(self) -> str:
        return str(self._net[1])

    @property
    def boot_ip(self) -> str:
        return str(self._net[2])

    def host_ip(self, index: int) -> str:
        if not 0 <= index < self._net.size - FIRST_HOST - 1:
            raise HostError(f"provisioning subnet {self.subnet} has no address for server #{index + 1}")
        return str(self._net[FIRST_HOST + index])

    @property
    def boot_server(self) -> HttpEndpoint:
        return HttpEndpoint.of("boot_server", self.boot_ip, HTTP_PORT)

    @property
    def installer_proxy(self) -> HttpEndpoint:
        return HttpEndpoint.of("installer_proxy", self.proxy_ip, INSTALLER_PROXY_PORT)


@dataclass(frozen=True)
class Deploy:
    """The image method's boot: the deploy ramdisk (``deploy_ramdisk``) and the server's disk image
    (``os_image``) in place of the installer and its preseed."""

    ramdisk: Path  # holds vmlinuz and initrd.gz
    image_dir: Path  # holds the image's parts (parts/p0000.lzo, ...)
    image: DiskImage


def boot_dir(lab: str) -> Path:
    return state_dir(lab) / "metal-boot"


def _state_path(lab: str) -> Path:
    return state_dir(lab) / "metal-boot" / "bootnet.json"


def alive(pid: int | None, marker: str) -> bool:
    if not pid:
        return False
    try:
        return marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _link_or_copy(src: Path, dst: Path, *, exact: bool = False) -> None:
    """``dst`` as ``src`` (a hard link where one can be made); ``exact``: kept only when it is ``src`` itself."""
    if not src.is_file():
        raise HostError(f"{src} is missing: install debian-installer-12-netboot-amd64 and ipxe (scripts/setup.sh)")
    if exact and dst.exists() and os.path.samefile(src, dst):
        return
    if not exact and dst.exists() and dst.stat().st_size == src.stat().st_size \
            and dst.stat().st_mtime >= src.stat().st_mtime:
        return
    tmp = dst.with_name(f".{dst.name}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:
        tmp.write_bytes(src.read_bytes())
    os.replace(tmp, dst)


def _files(net: ProvisioningNet, interface: str, target: InstallTarget | None, reservations: dict[str, list[str]],
           deploy: Deploy | None = None) -> str:
    """Write the boot tree (``target``'s script and preseed or disk image: arming its netboot); returns the
    dnsmasq config's hash (a change restarts dnsmasq)."""
    root = boot_dir(net.lab)
    for sub in ("tftp", "netboot", "ipxe", "preseed", "deploy", "image"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    _link_or_copy(IPXE_DIR / IPXE_LOADER, root / "tftp" / IPXE_LOADER)
    if deploy is None:
        for name in ("linux", "initrd.gz"):
            _link_or_copy(NETBOOT_DIR / name, root / "netboot" / name)
    for sub in ("ipxe", "preseed", "image"):
        for old in (root / sub).iterdir():
            if old.name.rsplit(".", 1)[0] not in reservations:
                shutil.rmtree(old) if old.is_dir() and not old.is_symlink() else old.unlink()
    if target is not None and deploy is not None:
        for name in DEPLOY_FILES:
            _link_or_copy(deploy.ramdisk / name, root / "deploy" / name)
        served = root / "image" / target.host
        shutil.rmtree(served, ignore_errors=True)  # another image's parts may be more or fewer
        served.mkdir()
        for part in deploy.image.parts:
            _link_or_copy(deploy.image_dir / "parts" / part.name, served / part.name, exact=True)
        write_atomic(served / MANIFEST, manifest_text(deploy.image), 0o644)
        (root / "preseed" / f"{target.host}.cfg").unlink(missing_ok=True)
        write_atomic(root / "ipxe" / f"{target.host}.ipxe", render_deploy_ipxe(target, deploy.image), 0o644)
    elif target is not None:
        shutil.rmtree(root / "image" / target.host, ignore_errors=True)
        write_atomic(root / "preseed" / f"{target.host}.cfg", render_preseed(target), 0o644)
        write_atomic(root / "ipxe" / f"{target.host}.ipxe", render_ipxe(target), 0o644)
    boot = BootNetwork(interface=interface, address=f"{net.boot_ip}/{netaddr.IPNetwork(net.subnet).prefixlen}",
                       tftp_root=str(root / "tftp"), http=net.boot_server)
    conf = render_dnsmasq(boot, [Reservation(h, mac, ip) for h, (mac, ip) in sorted(reservations.items())])
    write_atomic(root / "dnsmasq.conf", conf, 0o644)
    return hashlib.sha256(conf.encode()).hexdigest()[:16]


def _spawn(argv: list[str], log: Path) -> int:
    with log.open("ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True,
                                close_fds=True)
    time.sleep(0.3)
    if proc.poll() is not None:
        raise HostError(f"{argv[4] if len(argv) > 4 else argv[0]} exited with {proc.returncode}; see {log}")
    return proc.pid


def stop(pid: int | None, marker: str) -> bool:
    if not alive(pid, marker):
        return False
    assert pid is not None
    os.kill(pid, signal.SIGTERM)
    for _ in range(30):
        if not alive(pid, marker):
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return True


def require_tools() -> None:
    for tool in ("dnsmasq",):
        if not any(Path(d, tool).exists() for d in ("/usr/sbin", "/usr/bin")):
            raise HostError(f"{tool} not found: install dnsmasq-base (scripts/setup.sh)")


def serve(net: ProvisioningNet, target: InstallTarget, deploy: Deploy | None, *, interface: str,
          wrap: Sequence[str], state: dict) -> dict:
    """Reserve an address for ``target``'s boot NIC (beside the other servers' reservations in ``state``) and
    arm its netboot: the deploy ramdisk and its disk image with ``deploy``, else the Debian installer and its
    preseed; dnsmasq and the boot server answer on ``interface`` (run under ``wrap``). Returns the new state
    (the caller writes it, under its lock). Running services with the same reservations are kept; a changed
    reservation, or a boot server started by another version of its code, restarts them."""
    require_tools()
    state = dict(state)
    reservations: dict[str, list[str]] = dict(state.get("reservations", {}))
    taken = {ip for h, (_, ip) in reservations.items() if h != target.host}
    ip = reservations.get(target.host, [None, None])[1]
    if ip is None or ip in taken:
        ip = next(net.host_ip(i) for i in range(1 << 16) if net.host_ip(i) not in taken)
    reservations[target.host] = [target.boot_mac, ip]
    conf_hash = _files(net, interface, target, reservations, deploy)
    hosts = {ip: host for host, (_, ip) in sorted(reservations.items())}
    root = boot_dir(net.lab)
    code = hashlib.sha256(Path(__file__).with_name("bootserve.py").read_bytes()).hexdigest()[:16]
    if state.get("conf_hash") != conf_hash or state.get("hosts") != hosts or state.get("bootserve_code") != code:
        stop(state.get("dnsmasq_pid"), str(root / "dnsmasq.conf"))
        stop(state.get("bootserve_pid"), _SERVER)
        state.pop("dnsmasq_pid", None)
        state.pop("bootserve_pid", None)
    if not alive(state.get("dnsmasq_pid"), str(root / "dnsmasq.conf")):
        state["dnsmasq_pid"] = _spawn([*wrap, "dnsmasq", "--keep-in-foreground",
                                       f"--conf-file={root / 'dnsmasq.conf'}", f"--log-facility={root / 'dnsmasq.log'}",
                                       f"--dhcp-leasefile={root / 'dnsmasq.leases'}", "--pid-file="],
                                      root / "dnsmasq.out")
    if not alive(state.get("bootserve_pid"), _MARK):
        state["bootserve_pid"] = _spawn([*wrap, sys.executable, "-m", _MARK, net.boot_ip,
                                         str(HTTP_PORT), str(SYSLOG_PORT), str(root), json.dumps(hosts)],
                                        root / "bootserve.log")
    state.update(conf_hash=conf_hash, hosts=hosts, subnet=net.subnet, reservations=reservations, bootserve_code=code)
    return state


def stop_services(lab: str, state: dict) -> list[str]:
    """Stop dnsmasq and the boot server; returns what it stopped."""
    root = boot_dir(lab)
    gone = []
    if stop(state.get("dnsmasq_pid"), str(root / "dnsmasq.conf")):
        gone.append("dnsmasq")
    if stop(state.get("bootserve_pid"), _SERVER):
        gone.append("boot server")
    return gone


def forget(lab: str, host: str) -> int:
    """Drop ``host``'s reservation (its server is gone); returns how many servers keep one."""
    state = read_state(lab)
    reservations = dict(state.get("reservations", {}))
    if reservations.pop(host, None) is not None:
        state["reservations"] = reservations
        state["conf_hash"] = None  # the next up rewrites dnsmasq's config without it
        write_state(lab, state)
    return len(reservations)


def read_state(lab: str) -> dict:
    try:
        return json.loads(_state_path(lab).read_text())
    except (OSError, ValueError):
        return {}


def write_state(lab: str, state: dict) -> None:
    write_json_atomic(_state_path(lab), state)


def forget_state(lab: str) -> None:
    _state_path(lab).unlink(missing_ok=True)
