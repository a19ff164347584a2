"""Image deploy: the iPXE script and deploy-ramdisk command line of one server, from its checked install target.

The image method installs a server the way Ironic's direct deploy and MAAS do: the server network-boots a
small deploy ramdisk (``lab.deploy_ramdisk``: busybox and the kernel's storage and NIC drivers), which takes
an address by DHCP on its boot NIC, streams the server's disk image from the boot server onto its disk,
checks what it received against the SHA-256 sums on its command line, reports the installed system's SSH
host key to the boot server and powers the server off; the caller then boots it from its disk through the
BMC. The image (``lab.os_image``) is the plan's server, whole: GPT, an EFI system partition with the boot
loader, the root file system with the host's identity, NIC names and addresses. Nothing is installed by a
package manager on the server itself, so no installer components are fetched from a mirror.

Pure: every value on the command line comes from an ``InstallTarget`` (checked by ``netboot_values``) or a
``DiskImage`` checked here, so nothing read back or declared can add a kernel argument or an iPXE command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .netboot_values import NetbootValueError, ssh_public_key
from .preseed import InstallTarget

__all__ = ["DiskImage", "ImagePart", "PART_NAMES", "IMAGE_PATH", "DEPLOY_PATH", "DEPLOY_FILES", "deploy_kernel_args",
           "render_deploy_ipxe", "checked_image"]

IMAGE_PATH = "image"  # /image/<host>/<part>: served to that host only
DEPLOY_PATH = "deploy"  # /deploy/vmlinuz and initrd.gz: the deploy ramdisk, to any reserved host
DEPLOY_FILES = ("vmlinuz", "initrd.gz")
# lzop (LZO): busybox compresses it 2.6x faster than gzip -1 and decompresses it 4x faster (400 MB here: 2.0
# against 5.3 s, 0.74 against 3.0 s of CPU) for 20 % more bytes. Under TCG the write took as long either
# way (551 s against 565 s for 7 GiB: the emulated network and disk path bound it); the build is faster.
PART_NAMES = ("head.lzo", "root.lzo", "tail.lzo")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ImagePart:
    """One compressed piece of a disk image and the byte offset on the disk it is written at."""

    name: str  # one of PART_NAMES
    offset: int
    sha256: str  # of the compressed part as served


@dataclass(frozen=True)
class DiskImage:
    """One server's disk image as the boot server holds it (``lab.os_image.host_image`` writes its manifest).

    Three parts, so that no free space is sent: ``head.lzo`` (protective MBR, primary GPT and the used start
    of the EFI system partition) at 0, ``root.lzo`` (the root file system) at the root partition's start and
    ``tail.lzo`` (the backup GPT) in the disk's last MiB. What lies between is free space of the ESP, which
    FAT never reads, and the rest of the root partition, which the root file system grows into at first boot
    (x-systemd.growfs)."""

    disk_bytes: int
    parts: tuple[ImagePart, ...]
    host_key: str  # the installed system's SSH host public key (ssh-ed25519 BLOB)

    def to_dict(self) -> dict[str, object]:
        return {"disk_bytes": self.disk_bytes, "host_key": self.host_key,
                "parts": [[p.name, p.offset, p.sha256] for p in self.parts]}

    @classmethod
    def from_dict(cls, data: dict) -> DiskImage:
        return cls(int(data["disk_bytes"]), tuple(ImagePart(str(n), int(o), str(h)) for n, o, h in data["parts"]),
                   str(data["host_key"]))


def checked_image(image: DiskImage) -> DiskImage:
    if not isinstance(image.disk_bytes, int) or image.disk_bytes <= 0 or image.disk_bytes % 512:
        raise NetbootValueError("image.disk_bytes", image.disk_bytes, "a positive multiple of 512 bytes")
    if [p.name for p in image.parts] != list(PART_NAMES):
        raise NetbootValueError("image.parts", [p.name for p in image.parts], f"the parts {', '.join(PART_NAMES)}")
    for part in image.parts:
        if not isinstance(part.offset, int) or not 0 <= part.offset < image.disk_bytes or part.offset % 512:
            raise NetbootValueError(f"image.{part.name}.offset", part.offset,
                                    "a multiple of 512 bytes inside the disk")
        if not isinstance(part.sha256, str) or not _SHA256.fullmatch(part.sha256):
            raise NetbootValueError(f"image.{part.name}.sha256", part.sha256, "a SHA-256 hex digest (64 of 0-9a-f)")
    ssh_public_key("image.host_key", image.host_key)
    return image


def deploy_kernel_args(t: InstallTarget, image: DiskImage) -> str:
    """The deploy ramdisk's command line: who it is, where its image is, what it must check, where it logs."""
    img = checked_image(image)
    key_blob = img.host_key.split()[1]
    return " ".join([
        f"cf.host={t.host}", f"cf.mac={t.boot_mac}", f"cf.server={t.boot_server.host}:{t.boot_server.port}",
        f"cf.log={t.boot_server.host}:{t.syslog_port}", f"cf.disk={t.disk.device}",
        f"cf.bytes={img.disk_bytes}", "cf.parts=" + ",".join(f"{p.name}:{p.offset}:{p.sha256}" for p in img.parts),
        f"cf.key={key_blob}",
        # the lab's VMs run on QEMU's emulator; see preseed.kernel_args for no_timer_check
        "console=ttyS0,115200n8", "no_timer_check", "ipv6.disable=1", "quiet",
    ])  # fmt: skip


def render_deploy_ipxe(t: InstallTarget, image: DiskImage) -> str:
    return ("#!ipxe\n"
            f"kernel {t.boot_server.url(DEPLOY_PATH, 'vmlinuz')} initrd=initrd.gz {deploy_kernel_args(t, image)}\n"
            f"initrd {t.boot_server.url(DEPLOY_PATH, 'initrd.gz')}\n"
            "boot\n")
