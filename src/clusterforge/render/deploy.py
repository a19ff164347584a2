"""Image deploy: the iPXE script and deploy-ramdisk command line of one server, from its checked install target.

The image method installs a server the way Ironic's direct deploy and MAAS do: the server network-boots a
small deploy ramdisk (``baremetal.deploy_ramdisk``: busybox and the kernel's storage and NIC drivers), which takes
an address by DHCP on its boot NIC, fetches the image's manifest and checks it against the SHA-256 on its
command line, then fetches each part of the image, checks it against the manifest before writing it to the
disk, reports the installed system's SSH host key to the boot server and powers the server off; the caller
then boots it from its disk through the BMC. The image (``baremetal.os_image``) is the plan's server, whole: GPT,
an EFI system partition with the boot loader, the root file system with the host's identity, NIC names and
addresses. Nothing is installed by a package manager on the server itself, so no installer components are
fetched from a mirror.

Pure: every value on the command line comes from an ``InstallTarget`` (checked by ``netboot_values``) or a
``DiskImage`` checked here, so nothing read back or declared can add a kernel argument or an iPXE command;
the manifest is rendered here from the same checked image.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from .host_os import MIB
from .netboot_values import NetbootValueError, ssh_public_key
from .preseed import InstallTarget

__all__ = ["DiskImage", "ImagePart", "PART_BYTES", "MANIFEST", "IMAGE_PATH", "DEPLOY_PATH", "DEPLOY_FILES",
           "part_name", "is_part_name", "manifest_text", "manifest_sha256", "deploy_kernel_args", "render_deploy_ipxe",
           "checked_image"]

IMAGE_PATH = "image"  # /image/<host>/<part> and /image/<host>/manifest: served to that host only
DEPLOY_PATH = "deploy"  # /deploy/vmlinuz and initrd.gz: the deploy ramdisk, to any reserved host
DEPLOY_FILES = ("vmlinuz", "initrd.gz")
MANIFEST = "manifest"  # one line per part: NAME OFFSET BYTES SHA256; its SHA-256 is on the ramdisk's command line
# Parts of at most 64 MiB of disk, each compressed on its own (lzop -1: busybox compresses it 2.6x faster than
# gzip -1 and decompresses it 4x faster, for 20 % more bytes). The ramdisk fetches a part into its memory,
# checks its SHA-256 before anything of it reaches the disk, and writes it with O_DIRECT while the next part
# downloads. Under QEMU's emulated CPU (TCG) every guest instruction is the cost: the one-stream pipeline
# (wget | tee FIFO | lzop | dd, sha256sum on the FIFO) moved 12 MB/s, since busybox tee reads and writes 1 KiB
# per system call and each is dear on an emulated CPU; the guest's DMA (O_DIRECT) path runs at native speed.
# docs/measurements.md ("Bare metal") has the figures.
PART_BYTES = 64 * MIB
MAX_PARTS = 9999
_PART_NAME = re.compile(r"p[0-9]{4}\.lzo")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def part_name(index: int) -> str:
    return f"p{index:04d}.lzo"


def is_part_name(name: str) -> bool:
    return bool(_PART_NAME.fullmatch(name))


@dataclass(frozen=True)
class ImagePart:
    """One compressed piece of a disk image: ``size`` bytes of disk (at most PART_BYTES) at byte ``offset``."""

    name: str  # p0000.lzo, p0001.lzo, ... in disk order
    offset: int
    size: int
    sha256: str  # of the compressed part as served


@dataclass(frozen=True)
class DiskImage:
    """One server's disk image as the boot server holds it (``baremetal.os_image.host_image`` writes its manifest).

    Only the disk's used ranges are sent: the protective MBR, the primary GPT and the used start of the EFI
    system partition at 0, the root file system at the root partition's start, the backup GPT in the disk's
    last MiB, each cut into parts of PART_BYTES. What lies between is free space of the ESP, which FAT never
    reads, and the rest of the root partition, which the root file system grows into at first boot
    (x-systemd.growfs)."""

    disk_bytes: int
    parts: tuple[ImagePart, ...]
    host_key: str  # the installed system's SSH host public key (ssh-ed25519 BLOB)

    def to_dict(self) -> dict[str, object]:
        return {"disk_bytes": self.disk_bytes, "host_key": self.host_key,
                "parts": [[p.name, p.offset, p.size, p.sha256] for p in self.parts]}

    @classmethod
    def from_dict(cls, data: dict) -> DiskImage:
        return cls(int(data["disk_bytes"]),
                   tuple(ImagePart(str(n), int(o), int(s), str(h)) for n, o, s, h in data["parts"]),
                   str(data["host_key"]))


def checked_image(image: DiskImage) -> DiskImage:
    if not isinstance(image.disk_bytes, int) or image.disk_bytes <= 0 or image.disk_bytes % 512:
        raise NetbootValueError("image.disk_bytes", image.disk_bytes, "a positive multiple of 512 bytes")
    names = [p.name for p in image.parts]
    if not 1 <= len(names) <= MAX_PARTS or names != [part_name(i) for i in range(len(names))]:
        raise NetbootValueError("image.parts", names[:3] + (["..."] if len(names) > 3 else []),
                                f"1 to {MAX_PARTS} parts named p0000.lzo, p0001.lzo, ... in order")
    end = 0
    for part in image.parts:
        if not isinstance(part.size, int) or not 0 < part.size <= PART_BYTES or part.size % 512:
            raise NetbootValueError(f"image.{part.name}.size", part.size,
                                    f"a multiple of 512 bytes, at most {PART_BYTES}")
        if (not isinstance(part.offset, int) or part.offset % 512 or part.offset < end
                or part.offset + part.size > image.disk_bytes):
            raise NetbootValueError(f"image.{part.name}.offset", part.offset,
                                    "a multiple of 512 bytes after the part before it, the part inside the disk")
        end = part.offset + part.size
        if not isinstance(part.sha256, str) or not _SHA256.fullmatch(part.sha256):
            raise NetbootValueError(f"image.{part.name}.sha256", part.sha256, "a SHA-256 hex digest (64 of 0-9a-f)")
    ssh_public_key("image.host_key", image.host_key)
    return image


def manifest_text(image: DiskImage) -> str:
    """What the boot server serves as ``/image/<host>/manifest``: the checked parts, one line each."""
    return "".join(f"{p.name} {p.offset} {p.size} {p.sha256}\n" for p in checked_image(image).parts)


def manifest_sha256(image: DiskImage) -> str:
    return hashlib.sha256(manifest_text(image).encode()).hexdigest()


def deploy_kernel_args(t: InstallTarget, image: DiskImage) -> str:
    """The deploy ramdisk's command line: who it is, where its image is, what it must check, where it logs."""
    img = checked_image(image)
    key_blob = img.host_key.split()[1]
    return " ".join([
        f"cf.host={t.host}", f"cf.mac={t.boot_mac}", f"cf.server={t.boot_server.host}:{t.boot_server.port}",
        f"cf.log={t.boot_server.host}:{t.syslog_port}", f"cf.disk={t.disk.device}",
        f"cf.bytes={img.disk_bytes}", f"cf.manifest={manifest_sha256(img)}", f"cf.key={key_blob}",
        # the lab's VMs run on QEMU's emulator; see preseed.kernel_args for no_timer_check
        "console=ttyS0,115200n8", "no_timer_check", "ipv6.disable=1", "quiet",
    ])  # fmt: skip


def render_deploy_ipxe(t: InstallTarget, image: DiskImage) -> str:
    return ("#!ipxe\n"
            f"kernel {t.boot_server.url(DEPLOY_PATH, 'vmlinuz')} initrd=initrd.gz {deploy_kernel_args(t, image)}\n"
            f"initrd {t.boot_server.url(DEPLOY_PATH, 'initrd.gz')}\n"
            "boot\n")
