"""The files that make a disk image one planned server: identity, NIC names and addresses, boot and mounts.

Pure: from an ``InstallTarget`` (every value already through ``netboot_values``' grammars) and the file
systems' UUIDs. ``host_files`` is what the preseed's late_command writes for the Debian installer, in the
image method's form: systemd ``.link`` files name each NIC by its as-built MAC (mgmt0, bond0, rail0, ...)
and systemd-networkd ``.network`` files give it the planned address, MTU, gateway and routes. ``fstab``,
``grub_cfg`` and ``sfdisk_script`` lay the disk out as ``DiskLayout`` says: GPT, an EFI system partition,
ext4 root on the rest (grown to the partition at first boot), no swap.
"""

from __future__ import annotations

import re
import uuid as uuidlib
from dataclasses import dataclass

from .netboot_values import NetbootValueError
from .preseed import InstallTarget

__all__ = ["FileSpec", "host_files", "fstab", "grub_cfg", "sfdisk_script", "esp_volume_id", "ESP_TYPE", "ROOT_TYPE",
           "KERNEL_ARGS", "MIB"]

MIB = 1 << 20
ESP_TYPE = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"  # UEFI spec: EFI system partition
ROOT_TYPE = "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"  # Discoverable Partitions Specification: x86-64 root
# the installed system's console on the first serial port (the BMC's serial-over-LAN on real servers);
# no_timer_check: see preseed.kernel_args
KERNEL_ARGS = "ro console=ttyS0,115200n8 no_timer_check"


@dataclass(frozen=True)
class FileSpec:
    text: str
    mode: int = 0o644


def _uuid(field: str, value: str) -> str:
    try:
        return str(uuidlib.UUID(value))
    except (ValueError, TypeError, AttributeError):
        raise NetbootValueError(field, value, "a UUID such as 0b3e4c1a-5d7e-4f39-8a1b-2c3d4e5f6a7b") from None


def esp_volume_id(value: str) -> str:
    """A FAT volume id as fstab and mkfs.vfat spell it: XXXX-XXXX (hex)."""
    if not isinstance(value, str) or not re.fullmatch(r"[0-9A-F]{4}-[0-9A-F]{4}", value):
        raise NetbootValueError("esp.volume_id", value, "a FAT volume id XXXX-XXXX of 0-9 and A-F")
    return value


def _network(t: InstallTarget, index: int) -> str:
    nic = t.nics[index]
    lines = ["[Match]", f"Name={nic.name}", "", "[Link]", f"MTUBytes={nic.mtu}", "", "[Network]",
             "LinkLocalAddressing=no", "IPv6AcceptRA=no"]
    if nic.address is None:
        lines.append("DHCP=ipv4")
    else:
        lines.append(f"Address={nic.address}")
        if nic.gateway:
            lines.append(f"Gateway={nic.gateway}")
    for r in t.routes:
        if r.dev == nic.name:
            lines += ["", "[Route]", f"Destination={r.dst}", f"Gateway={r.via}"]
            if r.metric is not None:
                lines.append(f"Metric={r.metric}")
    return "\n".join(lines) + "\n"


def host_files(t: InstallTarget, *, host_key_public: str, mgmt_ip: str | None,
               proxy_conf: str | None) -> dict[str, FileSpec]:
    """The server's own files, by path relative to the root (a host key's private half is not among them:
    it is a secret the image builder copies from the lab's key store)."""
    files = {
        "etc/hostname": FileSpec(f"{t.host}\n"),
        "etc/hosts": FileSpec("127.0.0.1\tlocalhost\n" + f"127.0.1.1\t{t.host}\n"
                              + (f"{mgmt_ip}\t{t.host}\n" if mgmt_ip else "")),
        "etc/resolv.conf": FileSpec(""),
        "etc/machine-id": FileSpec("", 0o444),  # systemd makes one at first boot: every install is a new machine
        "root/.ssh/authorized_keys": FileSpec(f"{t.ssh_public_key}\n", 0o600),
        "etc/ssh/ssh_host_ed25519_key.pub": FileSpec(f"{host_key_public.strip()}\n"),
    }
    for i, nic in enumerate(t.nics):
        files[f"etc/systemd/network/10-clusterforge-{nic.name}.link"] = FileSpec(
            f"[Match]\nMACAddress={nic.mac}\n\n[Link]\nName={nic.name}\n")
        files[f"etc/systemd/network/20-clusterforge-{nic.name}.network"] = FileSpec(_network(t, i))
    if proxy_conf is not None:
        files["etc/apt/apt.conf.d/01clusterforge-proxy"] = FileSpec(proxy_conf)
    if t.time_servers:  # timesyncd.conf(5): a drop-in naming the NTP servers (checked: addresses, DNS names)
        files["etc/systemd/timesyncd.conf.d/50-clusterforge.conf"] = FileSpec(
            f"[Time]\nNTP={' '.join(t.time_servers)}\n")
    return files


def fstab(root_uuid: str, esp_id: str) -> str:
    return (f"UUID={_uuid('root.uuid', root_uuid)} / ext4 errors=remount-ro,x-systemd.growfs 0 1\n"
            f"UUID={esp_volume_id(esp_id)} /boot/efi vfat umask=0077,nofail 0 2\n")


def grub_cfg(root_uuid: str) -> str:
    """The boot loader's whole configuration (embedded in the ESP's stand-alone GRUB): the kernel and
    initramfs Debian's kernel package keeps linked at /vmlinuz and /initrd.img, so a kernel update needs
    no boot loader change."""
    root = _uuid("root.uuid", root_uuid)
    return ("set timeout=0\n"
            "serial --unit=0 --speed=115200\n"
            "terminal_input serial console\n"
            "terminal_output serial console\n"
            f"search --no-floppy --fs-uuid --set=root {root}\n"
            f"linux /vmlinuz root=UUID={root} {KERNEL_ARGS}\n"
            "initrd /initrd.img\n"
            "boot\n")


def sfdisk_script(*, disk_bytes: int, esp_mib: int, root_uuid: str, disk_id: str) -> str:
    """GPT: the ESP from 1 MiB, the root partition on the rest (sfdisk leaves the backup GPT its 33 sectors)."""
    if disk_bytes < (esp_mib + 2 + 1024) * MIB:
        raise NetbootValueError("disk.bytes", disk_bytes, f"a disk of at least {esp_mib + 1026} MiB")
    return ("label: gpt\n"
            f"label-id: {_uuid('disk.id', disk_id).upper()}\n"
            "unit: sectors\n"
            "first-lba: 2048\n"
            f"start=2048, size={esp_mib * MIB // 512}, type={ESP_TYPE}, name=esp\n"
            f"start={(1 + esp_mib) * MIB // 512}, type={ROOT_TYPE}, name=root,"
            f" uuid={_uuid('root.partuuid', root_uuid).upper()}\n")
