"""The provisioning network for real: bridge, boot namespace, dnsmasq 2.90, the boot server, the apt proxy.

A client namespace on the bridge takes the address dnsmasq reserves for the server; from it the iPXE
script, the preseed and the netboot kernel are fetched over HTTP, a syslog line and the completion
callback are sent, and ``netinstall.wait_installed`` turns them into progress and the host key. Another
address gets nothing. ``down`` leaves no namespace, link or process. (The whole install, DHCP and
TFTP by a real UEFI firmware included, is tests/lab/test_metal_install.py.) A few seconds; root only.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from clusterforge.baremetal import bootnet as boot
from clusterforge.baremetal import netinstall
from clusterforge.lab import bootnet, names
from clusterforge.lab.util import lab_dir
from clusterforge.plan.objects import Device, Interface
from clusterforge.render.netboot_values import HttpEndpoint
from clusterforge.render.preseed import HostNic, install_target

LAB = "cfmetalbn"
SUBNET = "198.19.253.0/24"
HOST = "su01-r01-gpu01"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMExdRvn8+zwIAT9AnY6Rk9JLJM+jJD15z9G+UZPJcwh test"
CLIENT_NS = f"cf-{LAB}.client"

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(boot.NETBOOT_DIR / "linux"),
                                reason="needs root and debian-installer-12-netboot-amd64 (scripts/setup.sh)")


def _target(net: bootnet.ProvisioningNet):
    device = Device(name=HOST, kind="server", model="m", su=1, rack="r", ru=1, height_u=1, power_w=1.0,
                    weight_kg=1.0, asset_id="a",
                    interfaces=(Interface("mgmt0", "management", "198.19.252.11/24", 1500, gateway="198.19.252.1"),))
    return install_target(device, boot_mac="52:54:00:aa:00:01",
                          nics=(HostNic("mgmt0", "52:54:00:aa:00:02", "198.19.252.11/24", 1500, "198.19.252.1"),),
                          ssh_key=KEY, boot_server=net.boot_server, syslog_port=boot.SYSLOG_PORT,
                          installer_proxy=net.installer_proxy, host_proxy=HttpEndpoint("198.19.252.1", 3142))


def _client(address: str) -> None:
    subprocess.run(["ip", "netns", "add", CLIENT_NS], check=True)
    subprocess.run(["ip", "link", "add", "cfbnc0", "type", "veth", "peer", "name", "eth0", "netns", CLIENT_NS],
                   check=True)
    subprocess.run(["ip", "link", "set", "cfbnc0", "master", bootnet.bridge(LAB), "up"], check=True)
    for cmd in (["addr", "add", address, "dev", "eth0"], ["link", "set", "eth0", "up"], ["link", "set", "lo", "up"]):
        subprocess.run(["ip", "-n", CLIENT_NS, *cmd], check=True)


def _curl(url: str) -> tuple[int, bytes]:
    out = subprocess.run(["ip", "netns", "exec", CLIENT_NS, "curl", "-s", "-o", "-", "-w", "\n%{http_code}",
                          "--max-time", "10", url], capture_output=True, check=False)
    body, _, code = out.stdout.rpartition(b"\n")
    return int(code or 0), body


@pytest.fixture(scope="module")
def served():
    net = bootnet.ProvisioningNet(LAB, SUBNET)
    try:
        state = bootnet.up(net, _target(net))
        _client(f"{net.host_ip(0)}/24")
        yield net, state
    finally:
        subprocess.run(["ip", "netns", "delete", CLIENT_NS], check=False)
        subprocess.run(["ip", "link", "del", "cfbnc0"], check=False, capture_output=True)
        gone = bootnet.down(LAB)
        assert names.netns_name(LAB, bootnet.BOOT_HOST) in gone
        import shutil

        shutil.rmtree(lab_dir(LAB), ignore_errors=True)
        left = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
        assert names.link_prefix(LAB) not in left


def test_dnsmasq_runs_with_the_reservation(served):
    net, state = served
    conf = (bootnet.boot_dir(LAB) / "dnsmasq.conf").read_text()
    assert f"dhcp-host=52:54:00:aa:00:01,{net.host_ip(0)},{HOST}" in conf
    assert b"dnsmasq" in Path(f"/proc/{state['dnsmasq_pid']}/cmdline").read_bytes()
    log = (bootnet.boot_dir(LAB) / "dnsmasq.log").read_text()
    assert "static leases only" in log and "TFTP root is" in log


def test_the_reserved_address_gets_its_script_preseed_and_kernel(served):
    net, _ = served
    code, script = _curl(net.boot_server.url("ipxe", "boot.ipxe"))
    assert code == 200 and script.startswith(b"#!ipxe") and f"/preseed/{HOST}.cfg".encode() in script
    code, preseed = _curl(net.boot_server.url("preseed", f"{HOST}.cfg"))
    assert code == 200 and b"d-i netcfg/get_hostname string su01-r01-gpu01" in preseed
    code, kernel = _curl(net.boot_server.url("netboot", "linux"))
    assert code == 200 and len(kernel) == (boot.NETBOOT_DIR / "linux").stat().st_size
    code, _ = _curl(net.boot_server.url("preseed", "other-host.cfg"))
    assert code == 404


def test_the_installer_proxy_answers_on_the_provisioning_network(served):
    net, _ = served
    code, _ = _curl(f"{net.installer_proxy.url()}")  # not a proxy request: refused, but it answers
    assert code == 403


def test_progress_and_the_callback_become_the_host_key(served):
    net, _ = served
    offset = netinstall.events_offset(LAB)
    sock = f"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"<13>Dec  2 main-menu[1]: INFO: Menu item 'partman-base' selected\", ('{net.boot_ip}', {boot.SYSLOG_PORT}))"  # noqa: E501
    subprocess.run(["ip", "netns", "exec", CLIENT_NS, "python3", "-c", sock], check=True)
    blob = KEY.split()[1]
    code, _ = _curl(net.boot_server.url("done", HOST) + "/" + blob)
    assert code == 204
    lines: list[str] = []
    key = netinstall.wait_installed(LAB, HOST, timeout_s=30, powered=lambda: True, offset=offset, poll_s=0.2,
                                    progress=lambda h, m: lines.append(m))
    assert key == f"ssh-ed25519 {blob}"
    assert any("partitioning the disk" in line for line in lines)


def test_a_silent_install_times_out_naming_the_server(served):
    with pytest.raises(netinstall.InstallError, match=rf"^{HOST}: the install did not finish within 1 s"):
        netinstall.wait_installed(LAB, HOST, timeout_s=1, powered=lambda: True,
                                  offset=netinstall.events_offset(LAB), poll_s=0.2)


def test_power_lost_mid_install_is_named(served):
    with pytest.raises(netinstall.InstallError, match=rf"^{HOST}: powered off during the install"):
        netinstall.wait_installed(LAB, HOST, timeout_s=30, powered=lambda: False,
                                  offset=netinstall.events_offset(LAB), poll_s=0.1, power_every_s=0.2)


def test_an_unreserved_address_gets_nothing(served):
    net, _ = served
    subprocess.run(["ip", "-n", CLIENT_NS, "addr", "add", f"{net.host_ip(5)}/24", "dev", "eth0"], check=True)
    try:
        out = subprocess.run(["ip", "netns", "exec", CLIENT_NS, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                              "--interface", net.host_ip(5), "--max-time", "10",
                              net.boot_server.url("preseed", f"{HOST}.cfg")], capture_output=True, text=True)
        assert out.stdout == "403"
    finally:
        subprocess.run(["ip", "-n", CLIENT_NS, "addr", "del", f"{net.host_ip(5)}/24", "dev", "eth0"], check=False)


def test_up_again_changes_nothing(served):
    net, state = served
    again = bootnet.up(net, _target(net))
    assert again["dnsmasq_pid"] == state["dnsmasq_pid"] and again["bootserve_pid"] == state["bootserve_pid"]
    assert json.loads((bootnet.boot_dir(LAB) / "bootnet.json").read_text())["conf_hash"] == state["conf_hash"]
