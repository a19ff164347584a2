"""The bare-metal install's rendered files: preseed, iPXE script, dnsmasq config, and the grammars in front.

Pure functions; the files' upstream check is the lab install itself (tests/lab/test_metal_install.py:
dnsmasq 2.90 parses the config, iPXE runs the script, debian-installer 12 takes the preseed)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from clusterforge.plan.objects import Device, Interface
from clusterforge.render.dnsmasq import BootNetwork, Reservation, render_dnsmasq
from clusterforge.render.netboot_values import HttpEndpoint, NetbootValueError, mac, ssh_public_key
from clusterforge.render.preseed import (
    DiskLayout,
    HostNic,
    HostRoute,
    install_target,
    management_nic,
    render_ipxe,
    render_preseed,
)

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMExdRvn8+zwIAT9AnY6Rk9JLJM+jJD15z9G+UZPJcwh clusterforge-lab"
BOOT = HttpEndpoint.of("boot", "198.19.250.2", 8080)
PROXY = HttpEndpoint.of("proxy", "198.19.250.1", 3142)
HOST_PROXY = HttpEndpoint.of("host_proxy", "198.18.8.1", 3142)


def device(name: str = "su01-r01-gpu01", ip: str | None = "198.18.8.11/24", gateway: str | None = "198.18.8.1"):
    return Device(name=name, kind="server", model="m", su=1, rack="su01-r01", ru=3, height_u=2, power_w=1.0,
                  weight_kg=1.0, asset_id="a",
                  interfaces=(Interface("mgmt0", "management", ip, 1500, gateway=gateway),))


def target(**kw):
    dev = kw.pop("dev", None) or device()
    nics = (management_nic(dev, kw.pop("management_mac", "52-54-00-CF-01-01")),
            HostNic("rail0", "52:54:00:cf:02:01", "198.18.0.1/31", 9000))
    args = dict(boot_mac="52:54:00:cf:00:01", nics=nics, ssh_key=KEY, boot_server=BOOT, syslog_port=5514,
                installer_proxy=PROXY, host_proxy=HOST_PROXY,
                routes=(HostRoute("198.18.0.0/22", "198.18.0.0", "rail0", 100),))
    args.update(kw)
    return install_target(dev, **args)


def test_preseed_points_the_time_daemon_at_the_declared_servers():
    text = render_preseed(target(time_servers=("198.18.8.1",)))
    assert "d-i pkgsel/include string python3 systemd-timesyncd\n" in text
    assert "printf '[Time]\\nNTP=198.18.8.1\\n' > /target/etc/systemd/timesyncd.conf.d/50-clusterforge.conf" in text
    assert "timesyncd" not in render_preseed(target())


def test_preseed_carries_the_plan_and_no_password():
    text = render_preseed(target())
    assert "d-i netcfg/get_hostname string su01-r01-gpu01\n" in text
    assert "d-i mirror/http/proxy string http://198.19.250.1:3142/\n" in text
    assert "d-i partman-auto/disk string /dev/vda\n" in text
    assert "address 198.18.8.11/24" in text and "gateway 198.18.8.1" in text
    assert "MACAddress=52:54:00:cf:01:01" in text  # canonical spelling of the as-built MAC
    assert "Name=rail0" in text and "address 198.18.0.1/31" in text and "mtu 9000" in text
    assert "up ip route replace 198.18.0.0/22 via 198.18.0.0 dev rail0 metric 100" in text
    assert f"echo '{KEY}' > /target/root/.ssh/authorized_keys" in text
    assert 'Acquire::http::Proxy \\"http://198.18.8.1:3142/\\"' in text
    assert "/done/su01-r01-gpu01/" in text
    assert "passwd/root-login boolean false" in text
    assert not re.search(r"password\s+\S", text.replace("passwd/", "")), "no password of any kind"
    assert "PRIVATE KEY" not in text


def test_every_line_is_one_setting():
    for line in render_preseed(target()).splitlines():
        assert line.startswith(("#", "d-i ", "tasksel ", "popularity-contest ")), line


def test_dhcp_when_the_plan_gives_no_address():
    text = render_preseed(target(dev=device(ip=None, gateway=None)))
    assert "iface mgmt0 inet dhcp" in text and "address 198.18.8" not in text


def test_disk_layout_is_the_declared_one():
    text = render_preseed(target(disk=DiskLayout(device="/dev/nvme0n1", esp_mib=1024, root_min_mib=8192)))
    assert "partman-auto/disk string /dev/nvme0n1" in text
    assert "1024 1024 1024 free" in text and " 8192 10000 -1 ext4 " in text


def test_ipxe_script_points_at_the_preseed():
    script = render_ipxe(target())
    assert script.startswith("#!ipxe\n")
    assert "url=http://198.19.250.2:8080/preseed/su01-r01-gpu01.cfg" in script
    assert "netcfg/choose_interface=52:54:00:cf:00:01" in script
    assert "initrd http://198.19.250.2:8080/netboot/initrd.gz\n" in script


@pytest.mark.parametrize("field,value", [
    ("ssh_key", "ssh-ed25519 AAAA'; rm -rf / #"),
    ("ssh_key", "-----BEGIN OPENSSH PRIVATE KEY-----"),
    ("ssh_key", KEY + "\nd-i preseed/late_command string reboot"),
    ("boot_mac", "52:54:00:cf:00:01;reboot"),
    ("boot_mac", "01:00:5e:00:00:01"),  # multicast
    ("management_mac", "zz:zz"),
    ("mirror_host", "deb.debian.org/../evil"),
    ("mirror_host", "deb.debian.org $(id)"),
    ("mirror_directory", "/debian/../../etc"),
    ("disk", DiskLayout(device="/dev/vda; wipefs")),
    ("disk", DiskLayout(device="/dev/../etc/passwd")),
])
def test_hostile_values_are_refused_naming_the_field(field, value):
    with pytest.raises(NetbootValueError) as err:
        target(**{field: value})
    assert "not allowed" in str(err.value)
    assert "PRIVATE KEY-----" not in str(err.value)  # a pasted private key is never echoed


@pytest.mark.parametrize("dev", [
    device(name="Gpu01"), device(name="gpu01;reboot"), device(ip="198.18.8.0/24"), device(ip="127.0.0.1/8"),
    device(ip="198.18.8.11/24", gateway="198.18.8.1 nameserver"),
])
def test_hostile_plan_values_are_refused(dev):
    with pytest.raises(NetbootValueError):
        target(dev=dev)


@pytest.mark.parametrize("nics", [
    (HostNic("rail0", "52:54:00:cf:02:01", "198.18.0.1/31"),),  # management first
    (HostNic("mgmt0", "52:54:00:cf:02:01", None), HostNic("rail0", "52:54:00:cf:02:01", None)),  # one MAC twice
    (HostNic("mgmt0", "52:54:00:cf:00:01", None),),  # the boot NIC's MAC
    (HostNic("mgmt0;id", "52:54:00:cf:02:01", None),),
    (HostNic("mgmt0", "52:54:00:cf:02:01", None, mtu=100000),),
])
def test_bad_nics_are_refused(nics):
    with pytest.raises(NetbootValueError):
        target(nics=nics)


def test_a_route_must_leave_by_a_planned_nic():
    with pytest.raises(NetbootValueError):
        target(routes=(HostRoute("198.18.0.0/22", "198.18.0.0", "eth9"),))


def test_mac_spellings():
    assert mac("m", "5254.00cf.0001") == "52:54:00:cf:00:01"
    assert ssh_public_key("k", KEY + "\n") == KEY


def net():
    return BootNetwork(interface="boot0", address="198.19.250.2/24", tftp_root="/srv/lab/tftp", http=BOOT)


def test_dnsmasq_reservations_only():
    text = render_dnsmasq(net(), [Reservation("su01-r01-gpu01", "52:54:00:CF:00:01", "198.19.250.10")])
    assert "dhcp-range=198.19.250.0,static,255.255.255.0,600s\n" in text
    assert "dhcp-host=52:54:00:cf:00:01,198.19.250.10,su01-r01-gpu01\n" in text
    assert "dhcp-boot=tag:ipxe,http://198.19.250.2:8080/ipxe/boot.ipxe\n" in text
    assert "no-resolv\n" in text and "dhcp-option=option:dns-server,198.19.250.2\n" in text
    assert "dhcp-option=option:router,198.19.250.2\n" in text  # netcfg asks nothing; nothing is forwarded


@pytest.mark.parametrize("res", [
    Reservation("gpu01", "52:54:00:cf:00:01", "198.19.251.10"),  # outside the subnet
    Reservation("gpu01", "52:54:00:cf:00:01", "198.19.250.2"),  # the server's own address
    Reservation("gpu01,set:x", "52:54:00:cf:00:01", "198.19.250.10"),
    Reservation("gpu01", "52:54:00:cf:00:01\ndhcp-boot=evil", "198.19.250.10"),
])
def test_dnsmasq_refuses_bad_reservations(res):
    with pytest.raises(NetbootValueError):
        render_dnsmasq(net(), [res])


@pytest.mark.parametrize("root", ["/srv/tftp,eth0", "relative/tftp", "/srv/../etc", "/srv/tftp\nport=53"])
def test_dnsmasq_refuses_a_bad_tftp_root(root):
    with pytest.raises(NetbootValueError):
        render_dnsmasq(BootNetwork("boot0", "198.19.250.2/24", root, BOOT), [])


def test_dnsmasq_refuses_a_second_reservation_for_a_mac():
    r = Reservation("gpu01", "52:54:00:cf:00:01", "198.19.250.10")
    with pytest.raises(NetbootValueError):
        render_dnsmasq(net(), [r, Reservation("gpu02", r.mac, "198.19.250.11")])


@pytest.mark.skipif(not shutil.which("dnsmasq") and not shutil.which("/usr/sbin/dnsmasq"), reason="no dnsmasq")
def test_dnsmasq_itself_accepts_the_config(tmp_path):
    conf = tmp_path / "dnsmasq.conf"
    conf.write_text(render_dnsmasq(net(), [Reservation("gpu01", "52:54:00:cf:00:01", "198.19.250.10")]))
    exe = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
    out = subprocess.run([exe, "--test", f"--conf-file={conf}"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "syntax check OK" in out.stderr


@pytest.mark.skipif(not shutil.which("debconf-set-selections"), reason="no debconf")
def test_debconf_itself_parses_the_preseed(tmp_path):
    """The installer loads a preseed with debconf-set-selections; its own parser accepts every line."""
    path = tmp_path / "preseed.cfg"
    path.write_text(render_preseed(target()))
    out = subprocess.run(["debconf-set-selections", "--checkonly", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
