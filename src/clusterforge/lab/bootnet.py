"""The provisioning network of a lab with bare-metal servers, and the boot services on it.

* a bridge ``cf<tag>b...`` (segment ``metal-prov``): the servers' boot NICs are its ports;
* the boot namespace ``cf-<lab>.metal-boot`` with one veth on it (``boot0``, the subnet's .2): dnsmasq
  2.90 (DHCP reservations only, TFTP with iPXE) and ``bootserve`` (iPXE script, kernel, initrd, preseed,
  the installer's syslog and completion callback) run there;
* the bridge's root-side address (.1) holds an apt proxy (``lab.aptproxy``, the lab's own cache), the
  only way the installer reaches Debian: the provisioning network has no route anywhere.

Everything carries the lab's name prefixes (``names``), so ``clusterforge lab down`` and the debris
sweep remove the bridge, veth and namespace (and kill what runs inside) even after a crash; ``down``
here also stops the root-side proxy, found by its command line when the state is gone.
The installer's files come from Debian's ``debian-installer-12-netboot-amd64`` and iPXE's ``snponly.efi``
from the ``ipxe`` package (scripts/setup.sh installs both).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import netaddr

from clusterforge.render.deploy import DEPLOY_FILES, MANIFEST, DiskImage, manifest_text, render_deploy_ipxe
from clusterforge.render.dnsmasq import IPXE_LOADER, BootNetwork, Reservation, render_dnsmasq
from clusterforge.render.netboot_values import HttpEndpoint
from clusterforge.render.preseed import InstallTarget, render_ipxe, render_preseed

from . import aptproxy, names, netns
from .util import LabError, file_lock, lab_dir, lab_home, run, write_atomic, write_json_atomic

__all__ = ["SEGMENT", "BOOT_HOST", "HTTP_PORT", "SYSLOG_PORT", "ProvisioningNet", "Deploy", "bridge", "boot_dir",
           "up", "down", "forget", "ensure_network", "NETBOOT_DIR", "IPXE_DIR"]

SEGMENT = "metal-prov"
BOOT_HOST = "metal-boot"
BOOT_IF = "boot0"
HTTP_PORT = 8080
SYSLOG_PORT = 5514
FIRST_HOST = 10  # .1 this machine (apt proxy), .2 the boot namespace, .10 on the servers
NETBOOT_DIR = Path("/usr/lib/debian-installer/images/12/amd64/text/debian-installer/amd64")
IPXE_DIR = Path("/usr/lib/ipxe")
_MARK = "clusterforge.lab.bootserve"


@dataclass(frozen=True)
class ProvisioningNet:
    """Addresses of one lab's provisioning subnet (from the lab's 198.18.0.0/15 blocks)."""

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
            raise LabError(f"provisioning subnet {self.subnet} has no address for server #{index + 1}")
        return str(self._net[FIRST_HOST + index])

    @property
    def boot_server(self) -> HttpEndpoint:
        return HttpEndpoint.of("boot_server", self.boot_ip, HTTP_PORT)

    @property
    def installer_proxy(self) -> HttpEndpoint:
        return HttpEndpoint.of("installer_proxy", self.proxy_ip, aptproxy.PORT)


@dataclass(frozen=True)
class Deploy:
    """The image method's boot: the deploy ramdisk (``lab.deploy_ramdisk``) and the server's disk image
    (``lab.os_image``) in place of the installer and its preseed."""

    ramdisk: Path  # holds vmlinuz and initrd.gz
    image_dir: Path  # holds the image's parts (parts/p0000.lzo, ...)
    image: DiskImage


def bridge(lab: str) -> str:
    return names.bridge_name(lab, SEGMENT)


def boot_dir(lab: str) -> Path:
    return lab_dir(lab) / "metal-boot"


def _state_path(lab: str) -> Path:
    return lab_dir(lab) / "metal-boot" / "bootnet.json"


def _alive(pid: int | None, marker: str) -> bool:
    if not pid:
        return False
    try:
        return marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def ensure_network(net: ProvisioningNet) -> None:
    """The bridge, the boot namespace and their addresses (before a VM's boot NIC joins the bridge)."""
    lab, br = net.lab, bridge(net.lab)
    ns = names.netns_name(lab, BOOT_HOST)
    have = run(["ip", "-o", "link", "show", "dev", br], check=False).returncode == 0
    if not have:
        run(["ip", "link", "add", "name", br, "type", "bridge", "stp_state", "0", "forward_delay", "0"])
        run(["ip", "link", "set", "dev", br, "alias", names.alias(lab, f"segment={SEGMENT}")])
    run(["ip", "link", "set", "dev", br, "up"])
    prefix = netaddr.IPNetwork(net.subnet).prefixlen
    if f"{net.proxy_ip}/{prefix}" not in run(["ip", "-o", "addr", "show", "dev", br]).stdout:
        run(["ip", "addr", "add", f"{net.proxy_ip}/{prefix}", "dev", br])
    netns.ensure(ns)
    peer = names.veth_peer_name(lab, BOOT_HOST, BOOT_IF)
    if run(["ip", "-n", ns, "-o", "link", "show", "dev", BOOT_IF], check=False).returncode != 0:
        run(["ip", "link", "del", "dev", peer], check=False)
        run(["ip", "link", "add", "name", BOOT_IF, "netns", ns, "type", "veth", "peer", "name", peer])
        run(["ip", "link", "set", "dev", peer, "alias", names.alias(lab, f"{BOOT_HOST}/{BOOT_IF}")])
    run(["ip", "link", "set", "dev", peer, "master", br, "up"])
    if f"{net.boot_ip}/{prefix}" not in run(["ip", "-n", ns, "-o", "addr", "show", "dev", BOOT_IF]).stdout:
        run(["ip", "-n", ns, "addr", "add", f"{net.boot_ip}/{prefix}", "dev", BOOT_IF])
    run(["ip", "-n", ns, "link", "set", "dev", BOOT_IF, "up"])


def _link_or_copy(src: Path, dst: Path, *, exact: bool = False) -> None:
    """``dst`` as ``src`` (a hard link where one can be made); ``exact``: kept only when it is ``src`` itself."""
    if not src.is_file():
        raise LabError(f"{src} is missing: install debian-installer-12-netboot-amd64 and ipxe (scripts/setup.sh)")
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


def _files(net: ProvisioningNet, target: InstallTarget | None, reservations: dict[str, list[str]],
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
    boot = BootNetwork(interface=BOOT_IF, address=f"{net.boot_ip}/{netaddr.IPNetwork(net.subnet).prefixlen}",
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
        raise LabError(f"{argv[4] if len(argv) > 4 else argv[0]} exited with {proc.returncode}; see {log}")
    return proc.pid


def _stop(pid: int | None, marker: str) -> bool:
    if not _alive(pid, marker):
        return False
    assert pid is not None
    os.kill(pid, signal.SIGTERM)
    for _ in range(30):
        if not _alive(pid, marker):
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return True


def up(net: ProvisioningNet, target: InstallTarget, deploy: Deploy | None = None) -> dict:
    """Create (or complete) the provisioning network, reserve an address for ``target``'s boot NIC (beside
    the other servers' reservations) and arm its netboot: the deploy ramdisk and its disk image with
    ``deploy``, else the Debian installer and its preseed. Idempotent: running services with the same
    reservations are kept; a changed reservation restarts dnsmasq and the boot server."""
    with file_lock(boot_dir(net.lab).parent / ".metal-boot.lock"):
        return _up_locked(net, target, deploy)


def _up_locked(net: ProvisioningNet, target: InstallTarget, deploy: Deploy | None) -> dict:
    import json

    for tool in ("dnsmasq",):
        if not any(Path(d, tool).exists() for d in ("/usr/sbin", "/usr/bin")):
            raise LabError(f"{tool} not found: install dnsmasq-base (scripts/setup.sh)")
    lab = net.lab
    ns = names.netns_name(lab, BOOT_HOST)
    state = _read_state(lab)
    ensure_network(net)
    reservations: dict[str, list[str]] = dict(state.get("reservations", {}))
    taken = {ip for h, (_, ip) in reservations.items() if h != target.host}
    ip = reservations.get(target.host, [None, None])[1]
    if ip is None or ip in taken:
        ip = next(net.host_ip(i) for i in range(1 << 16) if net.host_ip(i) not in taken)
    reservations[target.host] = [target.boot_mac, ip]
    conf_hash = _files(net, target, reservations, deploy)
    hosts = {ip: host for host, (_, ip) in sorted(reservations.items())}
    root = boot_dir(lab)
    # a boot server started by another version of its code (an upgrade) is restarted too
    code = hashlib.sha256(Path(__file__).with_name("bootserve.py").read_bytes()).hexdigest()[:16]
    if state.get("conf_hash") != conf_hash or state.get("hosts") != hosts or state.get("bootserve_code") != code:
        _stop(state.get("dnsmasq_pid"), str(root / "dnsmasq.conf"))
        _stop(state.get("bootserve_pid"), _MARK)
        state.pop("dnsmasq_pid", None)
        state.pop("bootserve_pid", None)
    if not _alive(state.get("dnsmasq_pid"), str(root / "dnsmasq.conf")):
        state["dnsmasq_pid"] = _spawn(["ip", "netns", "exec", ns, "dnsmasq", "--keep-in-foreground",
                                       f"--conf-file={root / 'dnsmasq.conf'}", f"--log-facility={root / 'dnsmasq.log'}",
                                       f"--dhcp-leasefile={root / 'dnsmasq.leases'}", "--pid-file="],
                                      root / "dnsmasq.out")
    if not _alive(state.get("bootserve_pid"), _MARK):
        state["bootserve_pid"] = _spawn(["ip", "netns", "exec", ns, sys.executable, "-m", _MARK, net.boot_ip,
                                         str(HTTP_PORT), str(SYSLOG_PORT), str(root), json.dumps(hosts)],
                                        root / "bootserve.log")
    if not _alive(state.get("proxy_pid"), "clusterforge.lab.aptproxy"):
        from urllib.parse import urlsplit

        from .rootfs import host_mirror

        mirror = urlsplit(host_mirror()).hostname or "deb.debian.org"
        state["proxy_pid"] = aptproxy.start(net.proxy_ip, lab_home() / "aptcache", sorted({mirror, "deb.debian.org"}),
                                            root / "aptproxy.log")
    state.update(conf_hash=conf_hash, hosts=hosts, subnet=net.subnet, reservations=reservations, bootserve_code=code)
    write_json_atomic(_state_path(lab), state)
    return state


def forget(lab: str, host: str) -> int:
    """Drop ``host``'s reservation (its server is gone); returns how many servers keep one."""
    state = _read_state(lab)
    reservations = dict(state.get("reservations", {}))
    if reservations.pop(host, None) is not None:
        state["reservations"] = reservations
        state["conf_hash"] = None  # the next up rewrites dnsmasq's config without it
        write_json_atomic(_state_path(lab), state)
    return len(reservations)


def _read_state(lab: str) -> dict:
    import json

    try:
        return json.loads(_state_path(lab).read_text())
    except (OSError, ValueError):
        return {}


def down(lab: str, subnet: str | None = None) -> list[str]:
    """Stop the boot services and remove the provisioning network; returns what it removed."""
    state = _read_state(lab)
    gone = []
    root = boot_dir(lab)
    if _stop(state.get("dnsmasq_pid"), str(root / "dnsmasq.conf")):
        gone.append("dnsmasq")
    if _stop(state.get("bootserve_pid"), _MARK):
        gone.append("boot server")
    proxies = {state.get("proxy_pid")} if state.get("proxy_pid") else set()
    subnet = subnet or state.get("subnet")
    if subnet:
        proxies |= set(aptproxy.serving_on({ProvisioningNet(lab, subnet).proxy_ip}))
    for pid in proxies:
        if _stop(pid, "clusterforge.lab.aptproxy"):
            gone.append("apt proxy")
    ns = names.netns_name(lab, BOOT_HOST)
    if netns.exists(ns):
        for pid in run(["ip", "netns", "pids", ns], check=False).stdout.split():
            _stop(int(pid), "")
        netns.delete(ns)
        gone.append(ns)
    for dev in (names.veth_peer_name(lab, BOOT_HOST, BOOT_IF), bridge(lab)):
        if run(["ip", "link", "del", "dev", dev], check=False).returncode == 0:
            gone.append(dev)
    _state_path(lab).unlink(missing_ok=True)
    return gone
