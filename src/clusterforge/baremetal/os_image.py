"""The disk images the image method deploys: one OS tree per software profile, one disk image per server.

``os_tree`` is what every bare-metal server of a profile runs, built once and cached by content
(``.lab/metal-os/<hash>/tree``): a Debian 12 rootfs (the lab's cached one) with the profile's golden image
layer over it (what the roles install, captured once, as the container lab's servers boot it) and what a
machine needs that a container does not: Debian's kernel and its initramfs (``linux-image-amd64``,
installed with apt in a chroot of the tree), systemd-timesyncd (the clock: a container's is its host's), and
systemd-networkd and systemd-timesyncd enabled. No host's identity is in it.

``host_image`` makes one server's disk from it without mounting anything (mkfs.ext4 -d, mtools, sfdisk on
plain files): GPT (sfdisk), an EFI system partition holding a stand-alone GRUB at the firmware's fallback
path ``\\EFI\\BOOT\\BOOTX64.EFI`` with its configuration embedded (``render.host_os.grub_cfg``), and the root
file system: the tree (hard-linked into a stage, never changed) plus the server's own files
(``render.host_os.host_files``) and its SSH host key, made here so the first SSH connection can check it.
Only the disk's used ranges are sent: the GPT and the used start of the ESP, the root file system (sized to
its content, grown to its partition at first boot), the backup GPT, cut into parts of 64 MiB, each compressed
on its own, with a manifest of offsets, sizes and SHA-256 sums (``render.deploy.DiskImage``); a changed input
is a new image, an unchanged one is found by its key. Temporary files are removed; only the parts stay.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import time
import uuid as uuidlib
from collections.abc import Iterator
from pathlib import Path

from clusterforge.hostio import HostError, Progress, file_lock, quiet, run, state_dir, write_atomic
from clusterforge.paths import lab_home
from clusterforge.render.deploy import PART_BYTES, DiskImage, ImagePart, checked_image, part_name
from clusterforge.render.host_os import MIB, FileSpec, fstab, grub_cfg, sfdisk_script

__all__ = ["OS_PACKAGES", "os_tree", "host_image", "host_key", "forget_host_key", "forget_server", "TAIL_BYTES",
           "image_dir", "server_dir"]

VERSION = 1
IMAGE_FORMAT = 3  # of a server's disk image: 3, lzop parts of 64 MiB and a manifest (2: three lzop parts, 1: gzip)
OS_PACKAGES = ("linux-image-amd64", "systemd-timesyncd")  # the kernel; the time daemon a server with its own clock runs
TAIL_BYTES = MIB  # the backup GPT's 33 sectors, in the disk's last MiB
_EXT4_FEATURES = "^metadata_csum_seed,^orphan_file"  # GRUB 2.06 reads ext4 without these
_GRUB_MODULES = "part_gpt ext2 fat search search_fs_uuid linux normal serial terminal echo gzio"
_ENABLE = (("multi-user.target.wants", "systemd-networkd.service"),
           ("sockets.target.wants", "systemd-networkd.socket"),
           ("network-online.target.wants", "systemd-networkd-wait-online.service"),
           ("sysinit.target.wants", "systemd-timesyncd.service"))  # fmt: skip


def _key(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


@contextlib.contextmanager
def _mounted(argv: list[str], point: Path) -> Iterator[Path]:
    point.mkdir(parents=True, exist_ok=True)
    run([*argv, point])
    try:
        yield point
    finally:
        run(["umount", "-l", point], check=False)


def _chroot_install(tree: Path, packages: tuple[str, ...], log: Path) -> None:
    """apt-get install in a chroot of the tree (this machine's network; the Debian sources only: a golden
    layer's extra repositories are not asked), services kept from starting (policy-rc.d)."""
    policy = tree / "usr/sbin/policy-rc.d"
    write_atomic(policy, "#!/bin/sh\nexit 101\n", 0o755)
    shutil.copyfile("/etc/resolv.conf", tree / "etc/resolv.conf")
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"}
    apt = ["chroot", str(tree), "apt-get", "-q", "-o", "Dir::Etc::sourceparts=-", "-o", "APT::Sandbox::User=root"]
    binds = []
    try:
        for sub, argv in (("proc", ["mount", "-t", "proc", "proc"]), ("sys", ["mount", "-t", "sysfs", "sysfs"]),
                          ("dev", ["mount", "--bind", "/dev"])):
            (tree / sub).mkdir(exist_ok=True)
            run([*argv, tree / sub])
            binds.append(tree / sub)
        with log.open("ab") as out:
            for step in (["update"], ["install", "-y", "--no-install-recommends", *packages], ["clean"]):
                done = subprocess.run([*apt, *step], stdout=out, stderr=subprocess.STDOUT, env=env, timeout=1800)
                if done.returncode != 0:
                    raise HostError(f"apt-get {step[0]} in the OS image failed ({done.returncode}); see {log}")
    finally:
        for point in reversed(binds):
            run(["umount", "-l", point], check=False)
        policy.unlink(missing_ok=True)
        write_atomic(tree / "etc/resolv.conf", "")
    for lists in (tree / "var/lib/apt/lists").glob("*_*"):
        lists.unlink()


def _enable_units(tree: Path) -> None:
    """networkd and timesyncd on, also where the container rootfs masked them."""
    units = tree / "etc/systemd/system"
    for wants, unit in _ENABLE:
        link = units / wants / unit
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(f"/lib/systemd/system/{unit}")
        masked = units / unit
        if masked.is_symlink() and os.readlink(masked) == "/dev/null":
            masked.unlink()


def os_tree(base: Path, base_hash: str | None, layers: tuple[Path, ...] = (), progress: Progress = quiet) -> Path:
    """The OS tree for the rootfs ``base`` (its content hash ``base_hash``) under ``layers`` (a golden image's
    layer, topmost first), cached."""
    key = _key({"v": VERSION, "rootfs": base_hash, "layers": [str(p) for p in layers],
                "packages": OS_PACKAGES})  # fmt: skip
    home = lab_home() / "metal-os"
    final = home / key
    if (final / "os.json").is_file():
        return final / "tree"
    home.mkdir(parents=True, exist_ok=True)
    with file_lock(home / ".lock"):
        if (final / "os.json").is_file():
            return final / "tree"
        t0 = time.monotonic()
        tmp = home / f".{key}.tmp"
        _wipe(tmp)
        tmp.mkdir()
        try:
            progress(None, f"OS image {key}: copying the rootfs{' and its golden layer' if layers else ''}")
            if layers:
                lower = ":".join(str(p) for p in (*layers, base))
                with _mounted(["mount", "-t", "overlay", "cf-os-image", "-o", f"ro,lowerdir={lower}"],
                              tmp / "merged") as merged:
                    run(["cp", "-a", f"{merged}/.", tmp / "tree"], timeout=1800)
            else:
                run(["cp", "-a", f"{base}/.", tmp / "tree"], timeout=1800)
            if (tmp / "merged").is_dir():
                (tmp / "merged").rmdir()
            progress(None, f"OS image {key}: installing {', '.join(OS_PACKAGES)} (apt in a chroot)")
            _chroot_install(tmp / "tree", OS_PACKAGES, tmp / "apt.log")
            _enable_units(tmp / "tree")
            if not (tmp / "tree" / "vmlinuz").is_symlink() or not (tmp / "tree" / "initrd.img").is_symlink():
                raise HostError(f"the OS image has no /vmlinuz and /initrd.img after installing {OS_PACKAGES[0]}")
            write_atomic(tmp / "os.json", json.dumps({"key": key, "rootfs": base_hash,
                                                      "layers": [str(p) for p in layers], "packages": OS_PACKAGES,
                                                      "seconds": round(time.monotonic() - t0, 1)}, indent=1) + "\n")
            _wipe(final)
            os.rename(tmp, final)
        except BaseException:
            _wipe(tmp)
            raise
        progress(None, f"OS image {key}: built in {time.monotonic() - t0:.0f} s")
        gone = _prune(home, str(base_hash))
        if gone:
            progress(None, f"OS image: removed {len(gone)} tree(s) of a rootfs or golden image that is gone")
    return final / "tree"


def _prune(home: Path, rootfs_hash: str) -> list[str]:
    """Remove the OS trees built on another rootfs or on a golden layer that is no longer in the cache."""
    gone = []
    for stamp_file in home.glob("*/os.json"):
        try:
            built = json.loads(stamp_file.read_text())
        except (OSError, ValueError):
            continue
        if built.get("rootfs") != rootfs_hash or not all(Path(p).is_dir() for p in built.get("layers", [])):
            _wipe(stamp_file.parent)
            gone.append(stamp_file.parent.name)
    return gone


def _wipe(path: Path) -> None:
    if path.exists():
        run(["umount", "-l", path / "merged"], check=False)
        shutil.rmtree(path, ignore_errors=True)


def server_dir(lab: str, server: str) -> Path:
    """What the image method keeps of one server: its disk image and its SSH host key."""
    return state_dir(lab) / "metal-install" / server


def image_dir(lab: str, server: str) -> Path:
    return server_dir(lab, server) / "image"


def host_key(lab: str, server: str) -> tuple[Path, str]:
    """The server's SSH host key, made once per server (0600 in the lab's state, never in Git or a log)."""
    where = server_dir(lab, server) / "hostkey"
    key = where / "ssh_host_ed25519_key"
    if not key.is_file() or not key.with_suffix(".pub").is_file():
        where.mkdir(parents=True, exist_ok=True)
        for p in (key, key.with_suffix(".pub")):
            p.unlink(missing_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"root@{server}", "-f", key])
    os.chmod(key, 0o600)
    return key, key.with_suffix(".pub").read_text().strip()


def forget_host_key(lab: str, server: str) -> None:
    """The next image of the server gets a new SSH host key (``replace``: a swapped machine)."""
    shutil.rmtree(server_dir(lab, server) / "hostkey", ignore_errors=True)


def forget_server(lab: str, server: str) -> None:
    """Remove the server's disk image and host key (``destroy``)."""
    shutil.rmtree(server_dir(lab, server), ignore_errors=True)


def _used_bytes(fat_image: Path) -> int:
    """Bytes up to the end of the last MiB of a new FAT image that holds anything: FAT allocates from the
    start, and the free clusters after that are never read, so they need not be sent."""
    last = 0
    with fat_image.open("rb") as f:
        index = 0
        while chunk := f.read(MIB):
            if chunk.count(0) != len(chunk):
                last = index + 1
            index += 1
    return last * MIB


def _segments(sources: list[tuple[Path, int]], offset: int) -> list[tuple[int, list[tuple[Path, int, int]]]]:
    """The (disk offset, [(file, start, bytes)]) of each part: the sources' first bytes, concatenated and cut
    every PART_BYTES (a part may span two files)."""
    out: list[tuple[int, list[tuple[Path, int, int]]]] = []
    pieces: list[tuple[Path, int, int]] = []
    room, start = PART_BYTES, offset
    for path, size in sources:
        at = 0
        while at < size:
            take = min(room, size - at)
            pieces.append((path, at, take))
            at += take
            room -= take
            if room == 0:
                out.append((start, pieces))
                start += PART_BYTES
                pieces, room = [], PART_BYTES
    if pieces:
        out.append((start, pieces))
    return out


def _compress_part(pieces: list[tuple[Path, int, int]], out: Path) -> tuple[int, str]:
    """``busybox lzop -1`` of the pieces, concatenated, into ``out`` (0600: the root file system holds the
    server's SSH host key): (raw bytes, SHA-256 of ``out``)."""
    from .deploy_ramdisk import busybox

    chunks = []
    for path, start, size in pieces:
        with path.open("rb") as f:
            f.seek(start)
            chunks.append(f.read(size))
        if len(chunks[-1]) != size:
            raise HostError(f"{path} is shorter than {start + size} bytes")
    raw = b"".join(chunks)
    done = subprocess.run([str(busybox()), "lzop", "-1", "-c"], input=raw, capture_output=True)
    if done.returncode != 0:
        raise HostError(f"busybox lzop exited with {done.returncode} compressing {out.name}")
    with open(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as sink:
        sink.write(done.stdout)
        sink.flush()
        os.fsync(sink.fileno())
    return len(raw), hashlib.sha256(done.stdout).hexdigest()


def _parts(pieces: list[tuple[int, list[tuple[Path, int]]]], stage: Path) -> tuple[ImagePart, ...]:
    """Every range of the disk that is sent, cut into parts and compressed, one process per core."""
    from concurrent.futures import ThreadPoolExecutor

    segments = [seg for offset, sources in pieces for seg in _segments(sources, offset)]
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        done = list(pool.map(lambda i: _compress_part(segments[i][1], stage / part_name(i)), range(len(segments))))
    return tuple(ImagePart(part_name(i), segments[i][0], size, digest) for i, (size, digest) in enumerate(done))


def _stage(stage: Path, tree: Path, files: dict[str, FileSpec], key_path: Path) -> None:
    """The root file system's content: the tree hard-linked, the server's own files and its SSH host key."""
    run(["cp", "-al", f"{tree}/.", stage], timeout=900)
    for rel, spec in files.items():
        dst = stage / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.unlink(missing_ok=True)  # a hard link into the tree: replaced, never written through
        write_atomic(dst, spec.text, spec.mode)
    (stage / "root/.ssh").chmod(0o700)
    hk = stage / "etc/ssh/ssh_host_ed25519_key"
    hk.unlink(missing_ok=True)
    shutil.copyfile(key_path, hk)
    os.chmod(hk, 0o600)
    (stage / "boot/efi").mkdir(parents=True, exist_ok=True)


def _esp(stage_root: Path, root_uuid: str, esp_id: str, esp_mib: int) -> Path:
    """The EFI system partition's image: a stand-alone GRUB at the firmware's fallback path."""
    cfg = stage_root / "grub.cfg"
    write_atomic(cfg, grub_cfg(root_uuid))
    efi = stage_root / "BOOTX64.EFI"
    run(["grub-mkstandalone", "-O", "x86_64-efi", "-o", efi, f"--modules={_GRUB_MODULES}",
         "--install-modules=" + _GRUB_MODULES, "--locales=", "--fonts=", "--themes=",
         f"boot/grub/grub.cfg={cfg}"], timeout=300)
    esp = stage_root / "esp.img"
    run(["mkfs.vfat", "-C", "-F", "32", "-n", "CF-ESP", "-i", esp_id.replace("-", ""), esp,
         str(esp_mib * 1024)])
    run(["mmd", "-i", esp, "::/EFI", "::/EFI/BOOT"])
    run(["mcopy", "-i", esp, efi, "::/EFI/BOOT/BOOTX64.EFI"])
    return esp


def host_image(lab: str, server: str, tree: Path, files: dict[str, FileSpec], *, disk_bytes: int,
               esp_mib: int, progress: Progress = quiet) -> DiskImage:
    """The server's disk image (its parts and image.json in ``image_dir``), made when its inputs changed."""
    where = image_dir(lab, server)
    key_path, key_pub = host_key(lab, server)
    os_stamp = json.loads((tree.parent / "os.json").read_text())
    inputs = {"v": VERSION, "format": IMAGE_FORMAT, "os": os_stamp["key"],
              "files": {p: [f.text, f.mode] for p, f in sorted(files.items())},
              "host_key": key_pub, "disk_bytes": disk_bytes, "esp_mib": esp_mib}
    key = _key(inputs)
    manifest = where / "image.json"
    with contextlib.suppress(OSError, ValueError, KeyError):
        have = json.loads(manifest.read_text())
        image = DiskImage.from_dict(have["image"])
        if have["key"] == key and all((where / "parts" / p.name).is_file() for p in image.parts):
            return image
    t0 = time.monotonic()
    stage_root = where.parent / ".image-build"
    shutil.rmtree(stage_root, ignore_errors=True)
    stage_root.mkdir(parents=True)
    try:
        ids = uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"clusterforge:{lab}:{server}:{key}")
        root_uuid, disk_id = str(ids), str(uuidlib.uuid5(ids, "disk"))
        esp_id = ids.hex[:4].upper() + "-" + ids.hex[4:8].upper()
        stage = stage_root / "root"
        progress(server, f"disk image: staging the root file system ({key})")
        _stage(stage, tree, {**files, "etc/fstab": FileSpec(fstab(root_uuid, esp_id))}, key_path)
        used = int(run(["du", "-sx", "--block-size=1", stage], timeout=600).stdout.split()[0])
        root_bytes = (used * 21 // 20 + 192 * MIB) // MIB * MIB  # it grows to the partition at first boot
        if (1 + esp_mib) * MIB + root_bytes + TAIL_BYTES > disk_bytes:
            raise HostError(f"{server}: the OS image needs {root_bytes // MIB} MiB of root file system;"
                           f" the disk is {disk_bytes // MIB} MiB")
        progress(server, f"disk image: root file system {root_bytes // MIB} MiB (mkfs.ext4 -d)")
        root_img = stage_root / "root.ext4"
        run(["mkfs.ext4", "-q", "-F", "-O", _EXT4_FEATURES, "-U", root_uuid, "-L", "cf-root", "-E",
             "lazy_itable_init=1,lazy_journal_init=1", "-d", stage, root_img, f"{root_bytes // 1024}k"], timeout=1800)
        esp = _esp(stage_root, root_uuid, esp_id, esp_mib)
        disk = stage_root / "disk.gpt"
        with disk.open("wb") as f:
            f.truncate(disk_bytes)
        run(["sfdisk", "-q", "--no-reread", "--no-tell-kernel", disk],
            input=sfdisk_script(disk_bytes=disk_bytes, esp_mib=esp_mib, root_uuid=root_uuid, disk_id=disk_id))
        tail = stage_root / "tail.bin"
        with disk.open("rb") as whole, tail.open("wb") as end:
            whole.seek(disk_bytes - TAIL_BYTES)
            end.write(whole.read(TAIL_BYTES))
        progress(server, "disk image: compressing (lzop -1, parts of 64 MiB)")
        root_offset = (1 + esp_mib) * MIB
        pieces = [(0, [(disk, MIB), (esp, _used_bytes(esp))]), (root_offset, [(root_img, root_bytes)]),
                  (disk_bytes - TAIL_BYTES, [(tail, TAIL_BYTES)])]
        staged = stage_root / "parts"
        staged.mkdir()
        parts = _parts(pieces, staged)
        image = DiskImage(disk_bytes=disk_bytes, parts=parts, host_key=" ".join(key_pub.split()[:2]))
        checked_image(image)
        manifest.unlink(missing_ok=True)  # no manifest names half-replaced parts
        shutil.rmtree(where / "parts", ignore_errors=True)
        where.mkdir(parents=True, exist_ok=True)
        for old in where.glob("*.[lg]z*"):  # an image of an earlier format (head.lzo, root.gz, ...)
            old.unlink()
        os.replace(staged, where / "parts")
        sent = sum((where / "parts" / p.name).stat().st_size for p in parts)
        write_atomic(manifest, json.dumps({"key": key, "image": image.to_dict(), "root_bytes": root_bytes,
                                           "sent_bytes": sent, "seconds": round(time.monotonic() - t0, 1)},
                                          indent=1) + "\n")
        progress(server, f"disk image: {sent // MIB} MiB compressed, made in {time.monotonic() - t0:.0f} s")
        return image
    finally:
        shutil.rmtree(stage_root, ignore_errors=True)
