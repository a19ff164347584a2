"""The provisioning network of a lab with bare-metal servers, and the boot services on it.

* a bridge ``cf<tag>b...`` (segment ``metal-prov``): the servers' boot NICs are its ports;
* the boot namespace ``cf-<lab>.metal-boot`` with one veth on it (``boot0``, the subnet's .2): the boot
  services (``baremetal.bootnet``: dnsmasq and the boot server) run there;
* the bridge's root-side address (.1) holds an apt proxy (``lab.aptproxy``, the lab's own cache), the
  only way the installer reaches Debian: the provisioning network has no route anywhere.

Everything carries the lab's name prefixes (``names``), so ``clusterforge lab down`` and the debris
sweep remove the bridge, veth and namespace (and kill what runs inside) even after a crash; ``down``
here also stops the root-side proxy, found by its command line when the state is gone.
"""

from __future__ import annotations

import netaddr

from clusterforge.baremetal import bootnet as boot
from clusterforge.baremetal.bootnet import Deploy, ProvisioningNet, boot_dir, forget
from clusterforge.render.preseed import InstallTarget

from . import aptproxy, names, netns
from .util import file_lock, lab_home, run

__all__ = ["SEGMENT", "BOOT_HOST", "ProvisioningNet", "Deploy", "bridge", "boot_dir", "up", "down", "forget",
           "ensure_network"]

SEGMENT = "metal-prov"
BOOT_HOST = "metal-boot"
BOOT_IF = "boot0"
_PROXY_MARK = "clusterforge.lab.aptproxy"


def bridge(lab: str) -> str:
    return names.bridge_name(lab, SEGMENT)


def _wrap(lab: str) -> list[str]:
    return ["ip", "netns", "exec", names.netns_name(lab, BOOT_HOST)]


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


def up(net: ProvisioningNet, target: InstallTarget, deploy: Deploy | None = None) -> dict:
    """Create (or complete) the provisioning network, arm ``target``'s netboot (``baremetal.bootnet.serve``,
    in the boot namespace) and keep the apt proxy on the bridge's .1. Idempotent."""
    with file_lock(boot_dir(net.lab).parent / ".metal-boot.lock"):
        boot.require_tools()
        state = boot.read_state(net.lab)
        ensure_network(net)
        state = boot.serve(net, target, deploy, interface=BOOT_IF, wrap=_wrap(net.lab), state=state)
        if not boot.alive(state.get("proxy_pid"), _PROXY_MARK):
            from urllib.parse import urlsplit

            from .rootfs import host_mirror

            mirror = urlsplit(host_mirror()).hostname or "deb.debian.org"
            state["proxy_pid"] = aptproxy.start(net.proxy_ip, lab_home() / "aptcache",
                                                sorted({mirror, "deb.debian.org"}), boot_dir(net.lab) / "aptproxy.log")
        boot.write_state(net.lab, state)
        return state


def down(lab: str, subnet: str | None = None) -> list[str]:
    """Stop the boot services and remove the provisioning network; returns what it removed."""
    state = boot.read_state(lab)
    gone = boot.stop_services(lab, state)
    proxies = {state.get("proxy_pid")} if state.get("proxy_pid") else set()
    subnet = subnet or state.get("subnet")
    if subnet:
        proxies |= set(aptproxy.serving_on({ProvisioningNet(lab, subnet).proxy_ip}))
    for pid in proxies:
        if boot.stop(pid, _PROXY_MARK):
            gone.append("apt proxy")
    ns = names.netns_name(lab, BOOT_HOST)
    if netns.exists(ns):
        for pid in run(["ip", "netns", "pids", ns], check=False).stdout.split():
            boot.stop(int(pid), "")
        netns.delete(ns)
        gone.append(ns)
    for dev in (names.veth_peer_name(lab, BOOT_HOST, BOOT_IF), bridge(lab)):
        if run(["ip", "link", "del", "dev", dev], check=False).returncode == 0:
            gone.append(dev)
    boot.forget_state(lab)
    return gone
