"""The deploy ramdisk's image writer (baremetal.deploy_ramdisk.WRITE_IMAGE) run on this machine with the ramdisk's
own busybox: its wget against a real HTTP server in a network namespace of the test's own, its sha256sum,
lzop and dd (O_DIRECT) onto a file that stands for the disk. The parts and the manifest are what
baremetal.os_image and render.deploy make. What the VM adds (drivers, DHCP, the BMC) tests/lab/test_metal_install.py
covers; this is the write loop itself: a good image lands byte for byte, and a part or a manifest that is not
the one the command line vouches for is refused before any of it reaches the disk."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clusterforge.render.deploy import MANIFEST, PART_BYTES, DiskImage, manifest_sha256, manifest_text
from clusterforge.render.host_os import MIB

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGZ4dGVzdGtleWZvcnRoZWRlcGxveXdyaXRldGVzdDEyMzQ1"
DISK_BYTES = 256 * MIB
PORT = 18431


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "not root (the test serves the image in a network namespace of its own)"
    if shutil.which("unshare") is None:
        return "unshare not found"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


@pytest.fixture(scope="module")
def applets(tmp_path_factory) -> Path:
    """A PATH directory of the ramdisk's busybox applets (the deploy ramdisk's own binary)."""
    from clusterforge.baremetal.deploy_ramdisk import busybox

    where = tmp_path_factory.mktemp("bin")
    box = busybox()
    for name in ("sh", "wget", "sha256sum", "cut", "wc", "lzop", "dd", "rm", "mv", "tail", "sync", "cat"):
        (where / name).symlink_to(box)
    return where


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[Path, DiskImage, bytes, bytes]:
    """A disk image as baremetal.os_image cuts it: a 1 MiB head at 0 and a 150 MiB 'root file system' (three
    parts: 64 + 64 + 22 MiB) at 2 MiB; served from ``image/<host>/`` as the boot server does."""
    from clusterforge.baremetal.os_image import _parts

    root = tmp_path_factory.mktemp("image")
    head = root / "head.bin"
    head.write_bytes(b"H" * 512 + os.urandom(MIB - 512))
    fs = root / "root.bin"
    with fs.open("wb") as f:  # compressible and not: both kinds of part
        for i in range(150):
            f.write(os.urandom(MIB) if i % 3 == 0 else bytes([i]) * MIB)
    served = root / "www" / "image" / "gpu01"
    served.mkdir(parents=True)
    parts = _parts([(0, [(head, MIB)]), (2 * MIB, [(fs, 150 * MIB)])], served)
    image = DiskImage(disk_bytes=DISK_BYTES, parts=parts, host_key=KEY)
    (served / MANIFEST).write_text(manifest_text(image))
    return root, image, head.read_bytes(), fs.read_bytes()


def _run(applets: Path, made, disk: Path, manifest_sum: str) -> subprocess.CompletedProcess:
    from clusterforge.baremetal.deploy_ramdisk import WRITE_IMAGE

    root = made[0]
    work = root / "ram"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    script = ('say() { echo "say: $*"; }\nfail() { echo "FAILED: $*"; exit 1; }\n' + WRITE_IMAGE)
    (root / "write.sh").write_text(script)
    outer = (f"ip link set lo up || exit 9; {sys.executable} -m http.server --bind 127.0.0.1 {PORT}"
             f" --directory {root / 'www'} >/dev/null 2>&1 & server=$!; trap 'kill $server' EXIT; "
             f"for i in $(seq 50); do (echo > /dev/tcp/127.0.0.1/{PORT}) 2>/dev/null && break; sleep 0.1; done; "
             f"PATH={applets} W={work} SERVER=127.0.0.1:{PORT} HOST=gpu01 DISK={disk} MANIFEST={manifest_sum} "
             f"{applets}/sh {root / 'write.sh'}")  # the server goes with the namespace's last process
    return subprocess.run(["unshare", "--net", "bash", "-c", outer], capture_output=True, text=True, timeout=300)


def _blank(root: Path) -> Path:
    disk = root / "disk.img"
    disk.unlink(missing_ok=True)
    with disk.open("wb") as f:
        f.truncate(DISK_BYTES)
    return disk


def test_the_image_lands_on_the_disk_byte_for_byte(applets, made):
    root, image, head, fs = made
    assert [(p.offset, p.size) for p in image.parts] == [(0, MIB), (2 * MIB, PART_BYTES),
                                                         (2 * MIB + PART_BYTES, PART_BYTES),
                                                         (2 * MIB + 2 * PART_BYTES, 22 * MIB)]
    disk = _blank(root)
    done = _run(applets, made, disk, manifest_sha256(image))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "say: step: wrote 4 of 4 parts (151 MiB)" in done.stdout
    assert "say: step: image written and checked" in done.stdout
    data = disk.read_bytes()
    assert len(data) == DISK_BYTES
    assert data[:MIB] == head and data[2 * MIB:152 * MIB] == fs
    assert data[MIB:2 * MIB].count(0) == MIB and data[152 * MIB:].count(0) == DISK_BYTES - 152 * MIB
    assert not list((root / "ram").glob("p*.lzo*"))  # each part left the ramdisk's memory once written


def test_a_part_that_is_not_the_manifests_is_refused_before_it_reaches_the_disk(applets, made):
    from clusterforge.baremetal.deploy_ramdisk import busybox

    root, image, head, fs = made
    victim = root / "www" / "image" / "gpu01" / image.parts[2].name
    kept = victim.read_bytes()
    try:
        victim.write_bytes(subprocess.run([busybox(), "lzop", "-1", "-c"], input=b"X" * PART_BYTES,
                                          capture_output=True, check=True).stdout)  # well-formed, another's
        disk = _blank(root)
        done = _run(applets, made, disk, manifest_sha256(image))
    finally:
        victim.write_bytes(kept)
    assert done.returncode == 1
    got = hashlib.sha256(victim.read_bytes()).hexdigest()
    assert got == image.parts[2].sha256
    assert f"FAILED: {image.parts[2].name} arrived with SHA-256 " in done.stdout
    assert f", not {image.parts[2].sha256}" in done.stdout
    data = disk.read_bytes()
    assert data[:MIB] == head and data[2 * MIB:2 * MIB + PART_BYTES] == fs[:PART_BYTES]  # the parts before it
    start = 2 * MIB + PART_BYTES
    assert data[start:].count(0) == DISK_BYTES - start  # nothing of the refused part, nothing after it


def test_a_manifest_the_command_line_does_not_vouch_for_is_refused(applets, made):
    root, image, _, _ = made
    disk = _blank(root)
    done = _run(applets, made, disk, "0" * 64)
    assert done.returncode == 1
    assert f"FAILED: the image manifest arrived with SHA-256 {manifest_sha256(image)}, not {'0' * 64}" in done.stdout
    assert disk.read_bytes().count(0) == DISK_BYTES
