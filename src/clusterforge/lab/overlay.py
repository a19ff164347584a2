"""Per-host root filesystems: an overlayfs over the shared rootfs, plus the host's identity.

Layout under ``.lab/<lab>/hosts/<host>/``: ``upper/`` and ``work/`` (overlay layers),
``root/`` (the mount point nspawn boots), ``console.log``.  Identity written into the upper
layer from this machine: hostname, /etc/hosts, a fresh machine-id, the host's own ed25519
SSH host key (generated here with ssh-keygen), the lab's key in root's authorized_keys
and, for routers, /etc/frr/frr.conf with bgpd enabled and frr.service enabled.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from .topology import LabHost, LabTopology
from .util import LabError, lab_dir, run, write_atomic


def host_dir(lab: str, host: str) -> Path:
    return lab_dir(lab) / "hosts" / host


def root_dir(lab: str, host: str) -> Path:
    return host_dir(lab, host) / "root"


def data_dir(lab: str, host: str, path: str) -> Path:
    """The directory here behind container path ``path`` (a LabHost data dir): ``data/<path, / as ->``."""
    return host_dir(lab, host) / "data" / path.strip("/").replace("/", "-")


def mount_field(field: str) -> str:
    """A /proc/mounts field as the path it names (space, tab, newline and backslash come octal-escaped)."""
    return field.encode().decode("unicode_escape") if "\\" in field else field


def mounts_under(path: Path) -> list[Path]:
    """Mount points at or below ``path``, deepest first (the order to unmount them)."""
    base = str(path.resolve())
    res = []
    with open("/proc/mounts") as f:
        for line in f:
            mp = mount_field(line.split()[1])
            if mp == base or mp.startswith(base + "/"):
                res.append(Path(mp))
    return sorted(set(res), key=lambda p: len(p.parts), reverse=True)


def is_mounted(path: Path) -> bool:
    return path.resolve() in mounts_under(path)


def mount(lab: str, host: str, rootfs: Path, layers: tuple[Path, ...] = ()) -> tuple[Path, bool]:
    """Mount the host's overlay (idempotent). Returns (mount point, created).

    ``layers`` (topmost first) sit between the base ``rootfs`` and the host's own upper layer: a golden
    image the host boots from (clusterforge.lab.image)."""
    d = host_dir(lab, host)
    root = d / "root"
    if is_mounted(root):
        return root, False
    for sub in ("upper", "work", "root"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    lower = ":".join(str(p) for p in (*layers, rootfs))
    opts = f"lowerdir={lower},upperdir={d / 'upper'},workdir={d / 'work'}"
    run(["mount", "-t", "overlay", f"cf-{lab}-{host}", "-o", opts, root])
    return root, True


def unmount_all(path: Path) -> list[Path]:
    """Unmount everything at or below ``path`` (lazily when busy). Returns what was unmounted."""
    done = []
    for mp in mounts_under(path):
        if run(["umount", mp], check=False).returncode != 0:
            run(["umount", "-l", mp], check=False)
        done.append(mp)
    left = mounts_under(path)
    if left:
        raise LabError(f"could not unmount {', '.join(map(str, left))}")
    return done


def ensure_lab_key(lab: str) -> tuple[Path, str]:
    """The lab's client key pair (``.lab/<lab>/id_ed25519``). Returns (private key path, public key)."""
    key = lab_dir(lab) / "id_ed25519"
    if not key.exists() or not key.with_suffix(".pub").exists():
        key.parent.mkdir(parents=True, exist_ok=True)
        for p in (key, key.with_suffix(".pub")):
            p.unlink(missing_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"clusterforge-lab-{lab}", "-f", key])
    return key, key.with_suffix(".pub").read_text().strip()


def _ids(root: Path, user: str) -> tuple[int, int]:
    for line in (root / "etc/passwd").read_text().splitlines():
        f = line.split(":")
        if f[0] == user:
            return int(f[2]), int(f[3])
    raise LabError(f"user {user} not in {root}/etc/passwd")


def _etc_hosts(topo: LabTopology, host: LabHost) -> str:
    lines = ["127.0.0.1\tlocalhost", f"127.0.1.1\t{host.name}", "::1\tlocalhost ip6-localhost ip6-loopback"]
    for h in topo.hosts:
        ip = topo.management_ip(h.name)
        if ip:
            lines.append(f"{ip}\t{h.name}")
    return "\n".join(lines) + "\n"


def prepare(topo: LabTopology, host: LabHost, root: Path, lab_pubkey: str) -> str:
    """Write the host's identity into its (mounted) root. Returns its SSH host public key.

    Idempotent: an existing host key and machine-id are kept, so a re-run changes nothing.
    """
    write_atomic(root / "etc/hostname", host.name + "\n")
    write_atomic(root / "etc/hosts", _etc_hosts(topo, host))
    mid = root / "etc/machine-id"
    if len(mid.read_text().strip()) != 32:
        write_atomic(mid, uuid.uuid4().hex + "\n", 0o444)
    hk = root / "etc/ssh/ssh_host_ed25519_key"
    if not hk.exists() or not hk.with_suffix(".pub").exists():
        for p in (hk, hk.with_suffix(".pub")):
            p.unlink(missing_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"root@{host.name}", "-f", hk])
    ssh_dir = root / "root/.ssh"
    ssh_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(ssh_dir, 0o700)
    write_atomic(ssh_dir / "authorized_keys", lab_pubkey + "\n", 0o600)
    proxy_conf = root / "etc/apt/apt.conf.d/01clusterforge-proxy"
    if topo.apt_proxy:
        from .aptproxy import apt_conf

        write_atomic(proxy_conf, apt_conf(topo.control.address))
    else:
        proxy_conf.unlink(missing_ok=True)
    if host.kind == "router":
        _router(host, root)
    if host.kubelet:
        from .kubelet_host import write_unit

        write_unit(root)
    return hk.with_suffix(".pub").read_text().strip()


def write_router_config(host: LabHost, root: Path) -> None:
    """The router's rendered frr.conf (and FRR enabled) in its root: at boot, and to repair drift."""
    _router(host, root)


def _router(host: LabHost, root: Path) -> None:
    uid, gid = _ids(root, "frr")
    conf = host.frr_conf if host.frr_conf is not None else f"hostname {host.name}\n!\nline vty\n!\n"
    write_atomic(root / "etc/frr/frr.conf", conf if conf.endswith("\n") else conf + "\n", 0o640)
    os.chown(root / "etc/frr/frr.conf", uid, gid)
    daemons = root / "etc/frr/daemons"
    text = daemons.read_text()
    new = "\n".join("bgpd=yes" if ln.strip() == "bgpd=no" else ln for ln in text.splitlines()) + "\n"
    if new != text:
        write_atomic(daemons, new, 0o640)
        os.chown(daemons, uid, gid)
    link = root / "etc/systemd/system/multi-user.target.wants/frr.service"
    if not link.is_symlink():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to("/lib/systemd/system/frr.service")
