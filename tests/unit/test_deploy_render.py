"""The image method's rendered pieces: the deploy ramdisk's command line and iPXE script, the server's own
files, its fstab, GRUB configuration and partition table, and the ramdisk's driver order.

Pure functions, each checked against what reads it where that tool is on this machine: sfdisk writes the
partition table to a sparse file and reads it back, grub-script-check parses the GRUB configuration,
systemd's own parser is the lab install (tests/lab/test_metal_install.py boots the image and looks at the
NICs' names and addresses), dash parses the ramdisk's /init."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess

import pytest
from test_netboot_render import KEY, target

from clusterforge.baremetal.deploy_ramdisk import INIT, UDHCPC_SCRIPT, module_order
from clusterforge.render.deploy import (
    PART_BYTES,
    DiskImage,
    ImagePart,
    deploy_kernel_args,
    manifest_text,
    render_deploy_ipxe,
)
from clusterforge.render.host_os import ESP_TYPE, MIB, ROOT_TYPE, fstab, grub_cfg, host_files, sfdisk_script
from clusterforge.render.netboot_values import NetbootValueError

ROOT_UUID = "0b3e4c1a-5d7e-4f39-8a1b-2c3d4e5f6a7b"
DISK = 16 << 30


def image(**kw) -> DiskImage:
    parts = kw.pop("parts", (ImagePart("p0000.lzo", 0, 3 * MIB, "a" * 64),
                             ImagePart("p0001.lzo", 513 * MIB, PART_BYTES, "b" * 64),
                             ImagePart("p0002.lzo", 513 * MIB + PART_BYTES, 5 * MIB, "d" * 64),
                             ImagePart("p0003.lzo", DISK - MIB, MIB, "c" * 64)))
    return DiskImage(disk_bytes=kw.pop("disk_bytes", DISK), parts=parts, host_key=kw.pop("host_key", KEY))


def test_the_command_line_carries_the_checked_image_and_nothing_else():
    args = deploy_kernel_args(target(), image())
    words = dict(w.split("=", 1) for w in args.split() if "=" in w)
    assert words["cf.host"] == "su01-r01-gpu01" and words["cf.mac"] == "52:54:00:cf:00:01"
    assert words["cf.server"] == "198.19.250.2:8080" and words["cf.log"] == "198.19.250.2:5514"
    assert words["cf.disk"] == "/dev/vda" and words["cf.bytes"] == str(DISK)
    assert words["cf.manifest"] == hashlib.sha256(manifest_text(image()).encode()).hexdigest()
    assert words["cf.key"] == KEY.split()[1]
    assert not any(c in args for c in "'\"`$;&|\n")
    script = render_deploy_ipxe(target(), image()).splitlines()
    assert script[0] == "#!ipxe" and script[-1] == "boot"
    assert script[1].startswith("kernel http://198.19.250.2:8080/deploy/vmlinuz initrd=initrd.gz cf.host=")
    assert script[2] == "initrd http://198.19.250.2:8080/deploy/initrd.gz"


def test_the_manifest_lists_each_part_where_it_goes():
    assert manifest_text(image()).splitlines() == [
        f"p0000.lzo 0 {3 * MIB} {'a' * 64}", f"p0001.lzo {513 * MIB} {PART_BYTES} {'b' * 64}",
        f"p0002.lzo {513 * MIB + PART_BYTES} {5 * MIB} {'d' * 64}", f"p0003.lzo {DISK - MIB} {MIB} {'c' * 64}"]


def _parts(*spec: tuple[str, int, int, str]) -> tuple[ImagePart, ...]:
    return tuple(ImagePart(*s) for s in spec)


@pytest.mark.parametrize("bad, field", [
    (dict(parts=_parts(("p0000.lzo", 0, MIB, "A" * 64))), "image.p0000.lzo.sha256"),
    (dict(parts=_parts(("p0000.lzo", 7, MIB, "a" * 64))), "image.p0000.lzo.offset"),
    (dict(parts=_parts(("p0000.lzo", 0, 2 * MIB, "a" * 64), ("p0001.lzo", MIB, MIB, "b" * 64))),
     "image.p0001.lzo.offset"),  # overlaps the part before it
    (dict(parts=_parts(("p0000.lzo", DISK - MIB, 2 * MIB, "a" * 64))), "image.p0000.lzo.offset"),  # past the end
    (dict(parts=_parts(("p0000.lzo", 0, PART_BYTES + 512, "a" * 64))), "image.p0000.lzo.size"),
    (dict(parts=_parts(("p0000.lzo", 0, 1000, "a" * 64))), "image.p0000.lzo.size"),
    (dict(parts=_parts(("p0000.lzo", 0, 0, "a" * 64))), "image.p0000.lzo.size"),
    (dict(parts=_parts(("p0001.lzo", 0, MIB, "a" * 64))), "image.parts"),  # not in order from p0000
    (dict(parts=_parts(("p0000.lzo; reboot", 0, MIB, "a" * 64))), "image.parts"),
    (dict(parts=()), "image.parts"),
    (dict(disk_bytes=1000), "image.disk_bytes"),
    (dict(host_key="ssh-ed25519 AAAA x; reboot"), "image.host_key"),
])  # fmt: skip
def test_a_bad_image_value_is_refused_naming_its_field(bad, field):
    with pytest.raises(NetbootValueError) as err:
        deploy_kernel_args(target(), image(**bad))
    assert err.value.field == field


def test_the_manifest_round_trips_through_json():
    img = image()
    assert DiskImage.from_dict(json.loads(json.dumps(img.to_dict()))) == img


def test_the_servers_files_name_and_address_every_nic_by_the_plan():
    files = host_files(target(), host_key_public=KEY, mgmt_ip="198.18.8.11", proxy_conf="Acquire::x;\n")
    assert files["etc/hostname"].text == "su01-r01-gpu01\n"
    assert "198.18.8.11\tsu01-r01-gpu01\n" in files["etc/hosts"].text
    assert files["root/.ssh/authorized_keys"].text == KEY + "\n" and files["root/.ssh/authorized_keys"].mode == 0o600
    assert files["etc/systemd/network/10-clusterforge-mgmt0.link"].text == (
        "[Match]\nMACAddress=52:54:00:cf:01:01\n\n[Link]\nName=mgmt0\n")
    mgmt = files["etc/systemd/network/20-clusterforge-mgmt0.network"].text
    assert "Address=198.18.8.11/24\n" in mgmt and "Gateway=198.18.8.1\n" in mgmt and "MTUBytes=1500\n" in mgmt
    rail = files["etc/systemd/network/20-clusterforge-rail0.network"].text
    assert "Address=198.18.0.1/31\n" in rail and "MTUBytes=9000\n" in rail
    assert "[Route]\nDestination=198.18.0.0/22\nGateway=198.18.0.0\nMetric=100\n" in rail
    assert files["etc/apt/apt.conf.d/01clusterforge-proxy"].text == "Acquire::x;\n"
    assert files["etc/machine-id"].text == ""  # systemd makes one at first boot
    assert not any("PRIVATE" in f.text for f in files.values())


def test_a_nic_without_a_planned_address_takes_dhcp():
    from test_netboot_render import device

    files = host_files(target(dev=device(ip=None, gateway=None)), host_key_public=KEY, mgmt_ip=None, proxy_conf=None)
    assert "DHCP=ipv4\n" in files["etc/systemd/network/20-clusterforge-mgmt0.network"].text
    assert "etc/apt/apt.conf.d/01clusterforge-proxy" not in files


def test_the_time_daemon_asks_the_declared_ntp_servers():
    files = host_files(target(time_servers=("198.18.8.1", "198.18.8.2")), host_key_public=KEY, mgmt_ip=None,
                       proxy_conf=None)
    assert files["etc/systemd/timesyncd.conf.d/50-clusterforge.conf"].text == "[Time]\nNTP=198.18.8.1 198.18.8.2\n"
    no_servers = host_files(target(), host_key_public=KEY, mgmt_ip=None, proxy_conf=None)
    assert not any(path.startswith("etc/systemd/timesyncd") for path in no_servers)  # Debian's default pool


def test_a_time_server_may_be_a_dns_name():
    files = host_files(target(time_servers=("ntp1.example.net", "198.18.8.2")), host_key_public=KEY, mgmt_ip=None,
                       proxy_conf=None)
    text = files["etc/systemd/timesyncd.conf.d/50-clusterforge.conf"].text
    assert text == "[Time]\nNTP=ntp1.example.net 198.18.8.2\n"


@pytest.mark.parametrize("bad", ["198.18.8.1\nNTP=203.0.113.9", "ntp_1.example.com", "127.0.0.1", "198.18.8.1 x",
                                 "NTP.example.com", "ntp.example.com;reboot", "1.2.3.999"])
def test_a_time_server_that_is_not_an_address_or_a_name_is_refused_naming_its_field(bad):
    with pytest.raises(NetbootValueError, match="time_servers"):
        target(time_servers=("198.18.8.1", bad))


def test_fstab_and_grub_refuse_what_is_not_a_uuid():
    with pytest.raises(NetbootValueError) as err:
        grub_cfg("x; reboot")
    assert err.value.field == "root.uuid"
    with pytest.raises(NetbootValueError):
        fstab(ROOT_UUID, "12345678")
    assert fstab(ROOT_UUID, "0B3E-4C1A").splitlines() == [
        f"UUID={ROOT_UUID} / ext4 errors=remount-ro,x-systemd.growfs 0 1",
        "UUID=0B3E-4C1A /boot/efi vfat umask=0077,nofail 0 2"]


@pytest.mark.skipif(not shutil.which("grub-script-check"), reason="grub-common not installed (scripts/setup.sh)")
def test_grub_parses_the_configuration(tmp_path):
    cfg = tmp_path / "grub.cfg"
    cfg.write_text(grub_cfg(ROOT_UUID))
    done = subprocess.run(["grub-script-check", cfg], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    cfg.write_text(grub_cfg(ROOT_UUID).replace("boot\n", "if true; then\n"))  # the check can fail
    assert subprocess.run(["grub-script-check", cfg], capture_output=True).returncode != 0


@pytest.mark.skipif(not shutil.which("sfdisk"), reason="fdisk not installed (scripts/setup.sh)")
def test_sfdisk_writes_the_layout_it_is_given(tmp_path):
    disk = tmp_path / "disk"
    with disk.open("wb") as f:
        f.truncate(DISK)
    script = sfdisk_script(disk_bytes=DISK, esp_mib=512, root_uuid=ROOT_UUID, disk_id=ROOT_UUID)
    subprocess.run(["sfdisk", "-q", "--no-reread", "--no-tell-kernel", disk], input=script, text=True, check=True)
    table = json.loads(subprocess.run(["sfdisk", "--json", disk], capture_output=True, text=True,
                                      check=True).stdout)["partitiontable"]
    assert table["label"] == "gpt" and table["id"] == ROOT_UUID.upper()
    esp, root = table["partitions"]
    assert (esp["start"], esp["size"], esp["type"]) == (2048, 512 * MIB // 512, ESP_TYPE)
    assert root["start"] == 513 * MIB // 512 and root["type"] == ROOT_TYPE and root["uuid"] == ROOT_UUID.upper()
    assert root["start"] + root["size"] <= DISK // 512 - 33  # the backup GPT's sectors stay free
    with pytest.raises(NetbootValueError):
        sfdisk_script(disk_bytes=100 * MIB, esp_mib=512, root_uuid=ROOT_UUID, disk_id=ROOT_UUID)


def test_drivers_load_after_their_dependencies():
    dep = ("kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko\n"
           "kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko\n"
           "kernel/net/core/failover.ko:\n"
           "kernel/drivers/block/virtio_blk.ko:\n"
           "kernel/drivers/nvme/host/nvme.ko: kernel/drivers/nvme/host/nvme-core.ko\n"
           "kernel/drivers/nvme/host/nvme-core.ko:\n")
    order = module_order(dep, {"virtio_blk"}, ("virtio_net", "virtio_blk", "nvme", "no_such_driver"))
    assert order == ["kernel/net/core/failover.ko", "kernel/drivers/net/net_failover.ko",
                     "kernel/drivers/net/virtio_net.ko", "kernel/drivers/nvme/host/nvme-core.ko",
                     "kernel/drivers/nvme/host/nvme.ko"]


@pytest.mark.skipif(not shutil.which("dash"), reason="no dash")
@pytest.mark.parametrize("script", [INIT, UDHCPC_SCRIPT])
def test_the_ramdisk_scripts_parse(script):
    done = subprocess.run(["dash", "-n"], input=script, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert subprocess.run(["dash", "-n"], input=script + "\nif true; then\n", capture_output=True,
                          text=True).returncode != 0
