"""Build (once) and cache the Debian 12 rootfs every lab host boots from.

The rootfs lives at ``<repo>/.lab/rootfs/bookworm``; it is built by debootstrap into a
temporary sibling directory, configured, stamped and then renamed into place, so a
half-finished build is never used.  The stamp (``etc/clusterforge-rootfs.json`` inside the
rootfs) records a hash of the package list, suite, mirror and post-configuration version:
when any of them changes the next :func:`ensure_rootfs` rebuilds.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from . import overlay
from .util import LabError, Progress, _noop, file_lock, lab_home, run, write_atomic

SUITE = "bookworm"
PACKAGES: tuple[str, ...] = (
    "systemd", "systemd-sysv", "dbus", "openssh-server", "python3", "iproute2", "iputils-ping",
    "kmod", "initramfs-tools", "frr", "sudo", "ca-certificates", "apt-utils", "procps",
)  # fmt: skip
# Bump when _configure() changes so cached rootfs images are rebuilt.
POSTCONF_VERSION = 1
STAMP = "etc/clusterforge-rootfs.json"
DEFAULT_MIRROR = "http://deb.debian.org/debian"

# Units that only cost boot time (or spin) in a container.
_MASK = (
    "console-getty.service", "getty@tty1.service", "getty.target",
    "apt-daily.timer", "apt-daily-upgrade.timer", "dpkg-db-backup.timer", "e2scrub_all.timer",
    "e2scrub_reap.service", "fstrim.timer", "man-db.timer", "systemd-timesyncd.service",
    "systemd-networkd-wait-online.service", "systemd-tmpfiles-clean.timer",
)  # fmt: skip

_SSHD_CONF = """\
# clusterforge lab: key-only root login, per-host ed25519 key written at host creation
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
MaxStartups 200:30:400
"""


def rootfs_path(suite: str = SUITE) -> Path:
    return lab_home() / "rootfs" / suite


def deb_cache_path() -> Path:
    """Downloaded .debs kept between builds (debootstrap --cache-dir); safe to delete."""
    return lab_home() / "rootfs" / "debs"


def host_mirror(suite: str = SUITE, etc_apt: Path = Path("/etc/apt")) -> str:
    """The Debian mirror this machine's apt uses for ``suite`` (deb822 or one-line format)."""
    candidates: list[Path] = [etc_apt / "sources.list"]
    d = etc_apt / "sources.list.d"
    if d.is_dir():
        candidates += sorted(d.glob("*.sources")) + sorted(d.glob("*.list"))
    for f in candidates:
        try:
            text = f.read_text()
        except OSError:
            continue
        if f.suffix == ".sources":
            for stanza in text.split("\n\n"):
                fields: dict[str, str] = {}
                for line in stanza.splitlines():
                    if line.strip().startswith("#") or ":" not in line:
                        continue
                    k, v = line.split(":", 1)
                    fields[k.strip().lower()] = v.strip()
                if "deb" in fields.get("types", "").split() and suite in fields.get("suites", "").split():
                    uris = fields.get("uris", "").split()
                    if uris and "security" not in uris[0]:
                        return uris[0].rstrip("/")
        else:
            for line in text.splitlines():
                parts = line.split("#", 1)[0].split()
                if len(parts) >= 3 and parts[0] == "deb":
                    rest = [p for p in parts[1:] if not p.startswith("[")]
                    if len(rest) >= 2 and rest[1] == suite and "security" not in rest[0]:
                        return rest[0].rstrip("/")
    return DEFAULT_MIRROR


def wanted_stamp(suite: str = SUITE, packages: tuple[str, ...] = PACKAGES, mirror: str | None = None) -> dict:
    mirror = mirror or host_mirror(suite)
    key = json.dumps(
        {"suite": suite, "packages": sorted(packages), "mirror": mirror, "postconf": POSTCONF_VERSION},
        sort_keys=True,
    )
    return {
        "suite": suite,
        "mirror": mirror,
        "packages": sorted(packages),
        "postconf": POSTCONF_VERSION,
        "hash": hashlib.sha256(key.encode()).hexdigest(),
    }


def current_stamp(path: Path | None = None) -> dict | None:
    p = (path or rootfs_path()) / STAMP
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


def is_current(suite: str = SUITE, packages: tuple[str, ...] = PACKAGES) -> bool:
    have = current_stamp(rootfs_path(suite))
    return have is not None and have.get("hash") == wanted_stamp(suite, packages)["hash"]


def in_use(path: Path, mounts_text: str | None = None) -> bool:
    """True when an overlay mount uses ``path`` as a lower layer (a lab is running on it).

    Paths compare resolved: a lab home reaches the shared caches through symlinks (the tests' home
    does), so the same layer is named differently by the mount and by the caller."""
    if mounts_text is None:
        try:
            mounts_text = Path("/proc/mounts").read_text()
        except OSError:
            return False
    want = os.path.realpath(path)
    for line in mounts_text.splitlines():
        for opt in (line.split()[3:4] or [""])[0].split(","):
            if opt.startswith("lowerdir=") and any(
                    os.path.realpath(overlay.mount_field(p)) == want for p in opt[len("lowerdir="):].split(":")):
                return True
    return False



def ensure_rootfs(
    *,
    suite: str = SUITE,
    packages: tuple[str, ...] = PACKAGES,
    force: bool = False,
    progress: Progress = _noop,
) -> Path:
    """Return the cached rootfs, building it first when missing, stale or ``force``."""
    final = rootfs_path(suite)
    want = wanted_stamp(suite, packages)
    with file_lock(final.parent / f".{suite}.lock"):
        have = current_stamp(final)
        if not force and have and have.get("hash") == want["hash"]:
            return final
        if final.exists() and in_use(final):
            raise LabError(f"rootfs {final} is stale but a lab is running on it; run `lab down` first")
        progress(None, f"building {suite} rootfs with debootstrap from {want['mirror']}")
        t0 = time.monotonic()
        tmp = final.parent / f".{suite}.tmp-{os.getpid()}"
        _rmtree(tmp)
        tmp.parent.mkdir(parents=True, exist_ok=True)
        log = final.parent / f"{suite}.build.log"
        debs = deb_cache_path()
        debs.mkdir(parents=True, exist_ok=True)
        try:
            with open(log, "w") as lf:
                p = subprocess.run(
                    [
                        "debootstrap", "--variant=minbase", "--components=main", f"--cache-dir={debs}",
                        f"--include={','.join(sorted(packages))}", suite, str(tmp), want["mirror"],
                    ],
                    stdout=lf, stderr=subprocess.STDOUT, timeout=1800,
                )  # fmt: skip
            if p.returncode != 0:
                raise LabError(f"debootstrap failed ({p.returncode}); see {log}")
            _configure(tmp)
            want["built_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            want["build_seconds"] = round(time.monotonic() - t0, 1)
            write_atomic(tmp / STAMP, json.dumps(want, indent=2) + "\n")
            old = None
            if final.exists():
                old = final.parent / f".{suite}.old-{os.getpid()}"
                os.rename(final, old)
            os.rename(tmp, final)
            if old is not None:
                _rmtree(old)
        except BaseException:
            _rmtree(tmp)
            raise
        progress(None, f"rootfs ready in {want['build_seconds']} s at {final}")
        return final


def _rmtree(p: Path) -> None:
    if p.is_symlink() or p.is_file():
        p.unlink()
    elif p.exists():
        shutil.rmtree(p)


def _mask(root: Path, unit: str) -> None:
    link = root / "etc/systemd/system" / unit
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to("/dev/null")


def _configure(root: Path) -> None:
    """Container-friendly defaults: sshd on (key only), frr off, no host identity baked in."""
    # sshd: enabled by its postinst; drop-in config; host keys are per host (overlay.py)
    write_atomic(root / "etc/ssh/sshd_config.d/00-clusterforge.conf", _SSHD_CONF)
    for k in (root / "etc/ssh").glob("ssh_host_*"):
        k.unlink()
    wants = root / "etc/systemd/system/multi-user.target.wants"
    wants.mkdir(parents=True, exist_ok=True)
    ssh_link = wants / "ssh.service"
    # (is_symlink, not exists: absolute links resolve against this machine, not the image)
    if not ssh_link.is_symlink():
        ssh_link.symlink_to("/lib/systemd/system/ssh.service")
    # frr: installed but disabled; routers enable it in their overlay
    frr_link = wants / "frr.service"
    if frr_link.is_symlink() or frr_link.exists():
        frr_link.unlink()
    for unit in _MASK:
        _mask(root, unit)
    # identity is per host
    write_atomic(root / "etc/machine-id", "")
    dbus_id = root / "var/lib/dbus/machine-id"
    if dbus_id.exists() or dbus_id.is_symlink():
        dbus_id.unlink()
    dbus_id.parent.mkdir(parents=True, exist_ok=True)
    dbus_id.symlink_to("/etc/machine-id")
    write_atomic(root / "etc/hostname", "localhost\n")
    write_atomic(
        root / "etc/hosts",
        "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n",
    )
    (root / "root/.ssh").mkdir(mode=0o700, parents=True, exist_ok=True)
    # no package caches in the image
    for deb in (root / "var/cache/apt/archives").glob("*.deb"):
        deb.unlink()
    run(["chroot", root, "/usr/bin/true"])  # sanity: the image is executable
