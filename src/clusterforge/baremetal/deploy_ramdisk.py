"""The deploy ramdisk: a small Linux userland that writes one server's disk image and reports back.

What Ironic's python agent and Tinkerbell's hook are to those tools, in a few hundred kilobytes: Debian's
statically linked busybox, the kernel's storage and NIC drivers (with their dependencies, from the OS
image's own ``modules.dep``) and ``/init`` below. It boots with the OS image's own kernel, so the drivers
match. ``/init`` reads everything from the kernel command line that ``render.deploy`` wrote (values that
passed the grammars there): it loads the drivers, takes the boot NIC by its MAC, asks DHCP for its
address, sends its progress as syslog to the boot server, fetches the image's manifest (refused unless its
SHA-256 is the command line's), then each part into memory, the next one downloading and being hashed while
the last, checked against the manifest's SHA-256, is written to the disk with O_DIRECT (the guest's DMA path:
under an emulated CPU a pipe or page-cache copy costs per byte); it refuses a disk of another size and a part
whose SHA-256 differs before any of it is written, flushes, calls the boot server back with the host key
and powers off. Every failure is one ``cf-deploy: FAILED: ...`` line
(the wait turns it into one error naming the server) followed by a power-off.

Built once per kernel and busybox (``.lab/deploy/<hash>/``: ``vmlinuz``, ``initrd.gz``), renamed into place
whole. busybox comes from Debian's ``busybox-static`` package, fetched with ``apt-get download`` into the
cache (it conflicts with the ``busybox`` package, so it is never installed on this machine).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from clusterforge.hostio import HostError, file_lock, run, write_atomic
from clusterforge.paths import lab_home

from .debpkg import member_of

__all__ = ["DRIVERS", "INIT", "WRITE_IMAGE", "module_order", "ensure_ramdisk", "ramdisk_dir", "busybox"]

VERSION = 2  # 2: the image in checked parts from a manifest, written with O_DIRECT
BUSYBOX_PACKAGE = "busybox-static"
# storage and NIC drivers a deploy needs: the lab's virtio devices and the usual GPU-server hardware
DRIVERS = ("virtio_pci", "virtio_blk", "virtio_net", "nvme", "ahci", "sd_mod", "e1000e", "igb", "ixgbe", "i40e",
           "ice", "bnxt_en", "mlx5_core")  # fmt: skip

# the image, part by part (its own string so tests/unit/test_deploy_write.py runs it on this machine):
# needs SERVER HOST DISK MANIFEST and say/fail
WRITE_IMAGE = r"""set -o pipefail
W=${W:-/tmp}  # where parts wait: the ramdisk's memory
fetch() {  # fetch NAME: $W/NAME, whole, or no file
  rm -f "$W/$1" "$W/$1.in" "$W/$1.sum"
  wget -q -O "$W/$1.in" "http://$SERVER/image/$HOST/$1" && mv "$W/$1.in" "$W/$1"
}
sha() { sha256sum "$1" | cut -d' ' -f1; }
take() { fetch "$1" && sha "$W/$1" > "$W/$1.sum"; }  # fetched and hashed, beside the write of the part before
say "step: fetching the image manifest"
fetch manifest || fail "the boot server did not serve the image manifest"
GOT=$(sha "$W/manifest")
[ "$GOT" = "$MANIFEST" ] || fail "the image manifest arrived with SHA-256 $GOT, not $MANIFEST"
TOTAL=$(wc -l < "$W/manifest")
exec 3< "$W/manifest"
read -r NAME OFF SIZE SUM <&3 || fail "the image manifest is empty"
take "$NAME" & PID=$!
N=0; MIB=0
while [ -n "$NAME" ]; do
  case "$NAME" in p[0-9][0-9][0-9][0-9].lzo) ;; *) fail "the manifest's line $((N + 1)) names no part" ;; esac
  case "$OFF:$SIZE" in :*|*:|*[!0-9:]*) fail "the manifest's line $((N + 1)) has no offset and size" ;; esac
  case "$SUM" in *[!0-9a-f]*) fail "the manifest's line $((N + 1)) has no SHA-256" ;; esac
  [ "${#SUM}" = 64 ] || fail "the manifest's line $((N + 1)) has no SHA-256"
  NEXT=""; read -r NEXT NOFF NSIZE NSUM <&3
  wait "$PID" || fail "the boot server did not serve $NAME"
  [ -n "$NEXT" ] && { take "$NEXT" & PID=$!; }  # the next part downloads and is hashed while this one is written
  GOT=$(cat "$W/$NAME.sum")
  [ "$GOT" = "$SUM" ] || fail "$NAME arrived with SHA-256 $GOT, not $SUM"
  lzop -dc "$W/$NAME" | dd of="$DISK" bs=4M seek="$OFF" iflag=fullblock oflag=seek_bytes,direct conv=notrunc,fsync \
    2>"$W/dd.err" || fail "writing $NAME to $DISK at byte $OFF: $(tail -n 1 "$W/dd.err")"
  rm -f "$W/$NAME" "$W/$NAME.sum"
  N=$((N + 1)); MIB=$((MIB + SIZE / 1048576))
  [ "$N" = 1 ] || [ $((N % 16)) = 0 ] || [ "$N" = "$TOTAL" ] && say "step: wrote $N of $TOTAL parts ($MIB MiB) to $DISK"
  NAME=$NEXT; OFF=$NOFF; SIZE=$NSIZE; SUM=$NSUM
done
[ "$N" = "$TOTAL" ] || fail "wrote $N of the manifest's $TOTAL parts"
sync
say "step: image written and checked"
"""

INIT = r"""#!/bin/sh
# clusterforge deploy ramdisk: write this server's disk image, check it, report, power off.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run
arg() { for w in $(cat /proc/cmdline); do case "$w" in "$1="*) echo "${w#*=}"; return;; esac; done; }
HOST=$(arg cf.host); MAC=$(arg cf.mac); SERVER=$(arg cf.server); LOG=$(arg cf.log); DISK=$(arg cf.disk)
BYTES=$(arg cf.bytes); MANIFEST=$(arg cf.manifest); KEY=$(arg cf.key)
say() { echo "cf-deploy: $*" > /dev/console; [ -n "$SYSLOG" ] && logger -t cf-deploy "$*"; }
fail() { say "FAILED: $*"; sleep 3; sync; poweroff -f; sleep 60; }
for m in $(cat /etc/modules.order); do insmod "/lib/modules/$m" 2>/dev/null; done
IF=""
for i in $(seq 1 30); do
  for d in /sys/class/net/*; do
    [ "$(cat "$d/address" 2>/dev/null)" = "$MAC" ] && IF=${d##*/}
  done
  [ -n "$IF" ] && break
  sleep 1
done
[ -n "$IF" ] || fail "no NIC with MAC $MAC"
ip link set lo up
ip link set "$IF" up
udhcpc -i "$IF" -n -q -t 10 -T 2 -s /etc/udhcpc.script >/dev/console 2>&1 || fail "no DHCP answer on $IF ($MAC)"
syslogd -R "$LOG" && SYSLOG=1
sleep 1
say "step: network up on $IF"
for i in $(seq 1 30); do [ -b "$DISK" ] && break; sleep 1; done
[ -b "$DISK" ] || fail "no disk $DISK"
HAVE=$(( $(cat /sys/class/block/${DISK##*/}/size) * 512 ))
[ "$HAVE" = "$BYTES" ] || fail "disk $DISK is $HAVE bytes; the image was made for $BYTES"
""" + WRITE_IMAGE + r"""
wget -q -O /dev/null "http://$SERVER/done/$HOST/$KEY" || fail "the boot server did not take the completion call"
sleep 2
poweroff -f
"""

UDHCPC_SCRIPT = r"""#!/bin/sh
case "$1" in
  bound|renew) ip addr flush dev "$interface"; ip addr add "$ip/$mask" dev "$interface" ;;
esac
"""


def ramdisk_dir(key: str) -> Path:
    return lab_home() / "deploy" / key


def module_order(modules_dep: str, builtin: set[str], wanted: tuple[str, ...]) -> list[str]:
    """The modules to load, dependencies first, as paths relative to ``/lib/modules/<version>`` (from the
    text of ``modules.dep``; a wanted driver built into the kernel or absent from it is skipped)."""
    deps: dict[str, list[str]] = {}
    by_name: dict[str, str] = {}
    for line in modules_dep.splitlines():
        path, sep, rest = line.partition(":")
        if not sep:
            continue
        deps[path] = rest.split()
        by_name[Path(path).name.split(".ko")[0].replace("-", "_")] = path
    order: list[str] = []

    def visit(path: str, seen: tuple[str, ...] = ()) -> None:
        if path in order or path in seen:
            return
        for dep in deps.get(path, []):
            visit(dep, (*seen, path))
        order.append(path)

    for name in wanted:
        key = name.replace("-", "_")
        if key in by_name and key not in builtin:
            visit(by_name[key])
    return order


def _busybox(cache: Path) -> Path:
    """Debian's static busybox binary (fetched once with apt-get download, unpacked into the cache)."""
    return member_of(cache, BUSYBOX_PACKAGE, "bin/busybox", "busybox")


def busybox() -> Path:
    """The ramdisk's busybox, for this machine too: its ``lzop`` compresses the image parts the ramdisk's
    ``lzop -d`` reads (one implementation on both ends; Debian's lzop package is not needed)."""
    cache = lab_home() / "deploy"
    cache.mkdir(parents=True, exist_ok=True)
    with file_lock(cache / ".lock"):
        return _busybox(cache)


def kernel_of(tree: Path) -> tuple[Path, str]:
    """The OS tree's kernel image and its version (the one /vmlinuz points at)."""
    link = tree / "vmlinuz"
    target = Path(os.readlink(link)) if link.is_symlink() else None
    if target is None:
        found = sorted((tree / "boot").glob("vmlinuz-*"))
        if not found:
            raise HostError(f"{tree} has no kernel (/boot/vmlinuz-*)")
        target = Path("boot") / found[-1].name
    image = tree / str(target).lstrip("/")
    return image, image.name.removeprefix("vmlinuz-")


def ensure_ramdisk(tree: Path) -> Path:
    """The deploy ramdisk for the OS tree's kernel: a directory holding ``vmlinuz`` and ``initrd.gz``."""
    cache = lab_home() / "deploy"
    cache.mkdir(parents=True, exist_ok=True)
    with file_lock(cache / ".lock"):
        busybox = _busybox(cache)
        kernel, version = kernel_of(tree)
        moddir = tree / "lib" / "modules" / version
        key = hashlib.sha256(json.dumps({
            "v": VERSION, "init": INIT, "udhcpc": UDHCPC_SCRIPT, "drivers": DRIVERS, "kernel": version,
            "kernel_size": kernel.stat().st_size, "busybox": hashlib.sha256(busybox.read_bytes()).hexdigest(),
        }, sort_keys=True).encode()).hexdigest()[:16]  # fmt: skip
        out = ramdisk_dir(key)
        if (out / "initrd.gz").is_file() and (out / "vmlinuz").is_file():
            return out
        builtin = {Path(p).name.split(".ko")[0].replace("-", "_")
                   for p in (moddir / "modules.builtin").read_text().split()} if (moddir / "modules.builtin").exists() \
            else set()  # fmt: skip
        order = module_order((moddir / "modules.dep").read_text(), builtin, DRIVERS)
        stage = cache / f".{key}.stage"
        shutil.rmtree(stage, ignore_errors=True)
        for d in ("bin", "proc", "sys", "dev", "tmp", "run", "etc", "lib/modules"):
            (stage / d).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(busybox, stage / "bin" / "busybox")
        os.chmod(stage / "bin" / "busybox", 0o755)
        applets = run([busybox, "--list"]).stdout.split()
        for applet in applets:
            if applet != "busybox":
                (stage / "bin" / applet).symlink_to("busybox")
        for rel in order:
            dst = stage / "lib" / "modules" / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(moddir / rel, dst)
        write_atomic(stage / "etc" / "modules.order", "".join(f"{rel}\n" for rel in order))
        write_atomic(stage / "etc" / "udhcpc.script", UDHCPC_SCRIPT, 0o755)
        write_atomic(stage / "init", INIT, 0o755)
        tmp = cache / f".{key}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        files = sorted(str(p.relative_to(stage)) for p in stage.rglob("*"))
        with (tmp / "initrd.gz").open("wb") as sink:
            cpio = subprocess.Popen(["cpio", "--quiet", "-o", "-H", "newc", "--owner", "0:0"], cwd=stage,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            gz = subprocess.Popen(["gzip", "-9n"], stdin=cpio.stdout, stdout=sink)
            assert cpio.stdin is not None and cpio.stdout is not None
            cpio.stdout.close()
            cpio.stdin.write("".join(f"{f}\n" for f in files).encode())
            cpio.stdin.close()
            if cpio.wait() != 0 or gz.wait() != 0:
                raise HostError(f"packing the deploy ramdisk failed (cpio {cpio.returncode}, gzip {gz.returncode})")
        shutil.copyfile(kernel, tmp / "vmlinuz")
        write_atomic(tmp / "ramdisk.json", json.dumps({"kernel": version, "modules": order}, indent=1) + "\n")
        shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
        shutil.rmtree(stage, ignore_errors=True)
        return out
