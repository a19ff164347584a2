"""Run one lab host as a booted systemd-nspawn container inside its network namespace.

There is no systemd on this machine's PID 1, so nspawn runs with ``--register=no
--keep-unit`` and is tracked by PID only.  With --keep-unit nspawn puts the container in
``<its own cgroup>/payload``; started from the root cgroup every container would share
``/payload`` and their systemds would race on the same unit cgroups (seen as units failing
with status 219/CGROUP).  So each nspawn is first moved into its own cgroup
``clusterforge/<lab>/<host>`` in the systemd-relevant hierarchies (cgroup2 and the v1
``name=systemd`` one).  Stopping sends SIGTERM to nspawn (which asks
the container's systemd for an orderly poweroff), then SIGKILLs whatever is left:
nspawn itself and every process whose root directory is the host's root.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from .netns import ns_path
from .util import LabError, run

_children: dict[int, subprocess.Popen] = {}


def cgroup_roots() -> list[Path]:
    """Mount points of every cgroup hierarchy: cgroup2 and each v1 one (``name=systemd`` and the
    controllers). A host in a cgroup of its own in each: its systemd's units, and its containers' pod
    cgroups when it runs a kubelet (lab/kubelet_host.py), sit under the host's, never beside another's."""
    roots = []
    with open("/proc/mounts") as f:
        for line in f:
            _, mp, fstype, _ = line.split()[:4]
            if fstype in ("cgroup2", "cgroup") and Path(mp) not in roots:
                roots.append(Path(mp))
    return roots


def _make_cgroup(path: Path) -> None:
    """mkdir -p in a cgroup hierarchy; every cpuset cgroup on the way takes its parent's CPUs and memory nodes
    where it has none (v1 cpuset refuses a process in a cgroup whose cpuset.cpus or cpuset.mems is empty).
    Hosts boot in parallel: another may have just made a parent and not yet filled it, so each fills them all."""
    path.mkdir(parents=True, exist_ok=True)
    chain = [path, *path.parents]
    for d in reversed(chain):
        for name in ("cpuset.cpus", "cpuset.mems"):
            own, parent = d / name, d.parent / name
            if own.exists() and parent.exists() and not own.read_text().strip():
                with contextlib.suppress(OSError):  # a racing host filled it first
                    own.write_text(parent.read_text())


def lab_cgroups(lab: str) -> list[Path]:
    return [r / "clusterforge" / lab for r in cgroup_roots()]


def host_cgroups(lab: str, host: str) -> list[Path]:
    return [c / host for c in lab_cgroups(lab)]


def pids_in_cgroups(paths: list[Path]) -> list[int]:
    res: set[int] = set()
    for base in paths:
        for d, _, _ in os.walk(base):
            try:
                with open(os.path.join(d, "cgroup.procs")) as f:
                    res.update(int(x) for x in f.read().split() if x.strip() not in ("", "0"))
            except OSError:
                continue
    return sorted(res)


def remove_cgroups(paths: list[Path]) -> list[Path]:
    """rmdir the cgroup trees bottom-up (their processes must be gone). Returns what is left."""
    left = []
    for base in paths:
        if not base.exists():
            continue
        for d, _, _ in os.walk(base, topdown=False):
            with contextlib.suppress(OSError):
                os.rmdir(d)
        if base.exists():
            left.append(base)
    # the shared clusterforge/ parent stays: removing it could race another lab's start
    return left


def start(name: str, root: Path, netns: str, log: Path, cgroups: Sequence[Path] = (),
          binds: Sequence[tuple[Path, str]] = (), fuse: bool = False, kubelet: bool = False) -> int:
    """Boot the container in the background (in its own ``cgroups``); returns the nspawn PID.

    ``binds``: (directory here, path in the container) pairs, read-write. ``fuse``: pass /dev/fuse in
    (nspawn runs unregistered, so no device cgroup policy applies beyond the bind itself). ``kubelet``: the
    host runs containerd and a kubelet: keyring calls allowed, /dev/kmsg read-only (lab/kubelet_host.py).
    """
    argv = [
        "systemd-nspawn", "--boot", "--register=no", "--keep-unit", "--quiet",
        "-D", str(root), "-M", name,
        f"--network-namespace-path={ns_path(netns)}",
        "--console=read-only", "--link-journal=no", "--resolv-conf=off", "--timezone=off",
        "--capability=CAP_NET_ADMIN,CAP_NET_RAW,CAP_SYS_ADMIN",
    ]  # fmt: skip
    for src, dst in binds:
        src.mkdir(parents=True, exist_ok=True)
        argv.append(f"--bind={src}:{dst}")
    if fuse:
        argv.append("--bind=/dev/fuse")
    # the kubelet reads /dev/kmsg (CAP_SYSLOG when dmesg is restricted); runc makes keyrings
    if kubelet:
        argv += ["--capability=CAP_SYSLOG", "--system-call-filter=@keyring", "--bind-ro=/dev/kmsg"]
    if cgroups:
        for cg in cgroups:
            _make_cgroup(cg)
        moves = " ".join(f'echo $$ > "{cg}/cgroup.procs" &&' for cg in cgroups)
        argv = ["/bin/sh", "-c", f'{moves} exec "$@"', "cf-nspawn", *argv]
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as lf:
        p = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=lf, stderr=subprocess.STDOUT, start_new_session=True
        )
    _children[p.pid] = p
    return p.pid


def _stat(pid: int) -> str | None:
    p = _children.get(pid)
    if p is not None and p.poll() is not None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def _is_nspawn(argv: list[str]) -> bool:
    # the nspawn itself, or the /bin/sh that moves into the cgroup just before exec'ing it
    return bool(argv) and (argv[0].endswith("systemd-nspawn") or (argv[0] == "/bin/sh" and "cf-nspawn" in argv))


def is_running(pid: int | None, root: Path) -> bool:
    """True when ``pid`` is a live systemd-nspawn booting ``root`` (guards against PID reuse).

    A process in the middle of execve (the cgroup shell exec'ing nspawn) reads as an empty command
    line for a moment; that is read again, not taken for a dead container (a boot under load was)."""
    if not pid or _stat(pid) in (None, "Z", "X"):
        return False
    argv = _cmdline(pid)
    for _ in range(50):
        if argv or _stat(pid) in (None, "Z", "X"):
            break
        time.sleep(0.01)
        argv = _cmdline(pid)
    return _is_nspawn(argv) and str(root) in argv


def _under(path: str, bases: tuple[str, ...]) -> bool:
    return any(path == b or path.startswith(b + "/") for b in bases)


def leftover_pids(items: list[tuple[int | None, Path, str]], cgroups: Sequence[Path] = ()) -> list[int]:
    """Every process belonging to the given hosts, found in one pass over /proc.

    A process belongs to a host when it lives in the host's network namespace, has its
    root directory inside the host's root, is a systemd-nspawn (or its launcher) booting
    that root, or sits in one of ``cgroups``.  Catches crash leftovers whose nspawn died.
    """
    roots = tuple(str(root) for _, root, _ in items)
    inos = set()
    for _, _, netns in items:
        try:
            inos.add(f"net:[{os.stat(ns_path(netns)).st_ino}]")
        except OSError:
            continue
    found = set(pids_in_cgroups(list(cgroups)))
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{d}/ns/net") in inos or _under(os.readlink(f"/proc/{d}/root"), roots):
                found.add(int(d))
                continue
        except OSError:
            continue
        argv = _cmdline(int(d))
        if _is_nspawn(argv) and "-D" in argv:
            i = argv.index("-D")
            if i + 1 < len(argv) and _under(argv[i + 1], roots):
                found.add(int(d))
    found.discard(os.getpid())
    return sorted(found)


def _kill(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def stop_many(items: list[tuple[int | None, Path, str]], grace: float = 5.0, cgroups: Sequence[Path] = ()) -> None:
    """Stop containers given as (nspawn pid, root, netns) triples, all at once.

    SIGTERM → orderly poweroff; after ``grace`` seconds SIGKILL nspawn and every process
    still inside the host's network namespace or rooted in its root directory.
    """
    live = [(pid, root) for pid, root, _ in items if pid and is_running(pid, root)]
    for pid, _ in live:
        _kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(is_running(pid, root) for pid, root in live):
        time.sleep(0.1)

    deadline = time.monotonic() + 10
    while True:
        left = leftover_pids(items, list(cgroups))
        if not left or time.monotonic() > deadline:
            break
        for p in left:
            _kill(p, signal.SIGKILL)
        time.sleep(0.05)
    for nspawn_pid, _, _ in items:
        child = _children.pop(nspawn_pid, None) if nspawn_pid else None
        if child is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=1)


def tcp_banner(ip: str, port: int = 22, timeout: float = 1.0) -> bool:
    """True when something at ip:port answers with an SSH banner."""
    try:
        with socket.create_connection((ip, port), timeout=timeout) as s:
            s.settimeout(timeout)
            return s.recv(8).startswith(b"SSH-")
    except OSError:
        return False


def ns_banner(netns: str, port: int = 22, timeout: float = 1.0) -> bool:
    """Same check from inside the host's namespace (for hosts off the management segment)."""
    script = f"exec 3<>/dev/tcp/127.0.0.1/{port} && head -c 4 <&3"
    p = run(["ip", "netns", "exec", netns, "timeout", str(timeout), "bash", "-c", script], check=False)
    return p.stdout.startswith("SSH-")


def sshd_up(netns: str, mgmt_ip: str | None, timeout: float = 1.0) -> bool:
    return tcp_banner(mgmt_ip, timeout=timeout) if mgmt_ip else ns_banner(netns, timeout=timeout)


def wait_sshd(pid: int, root: Path, netns: str, mgmt_ip: str | None, log: Path, timeout: float = 120) -> float:
    """Wait until the host's sshd answers; returns seconds waited. Raises if nspawn dies first."""
    t0 = time.monotonic()
    while True:
        if sshd_up(netns, mgmt_ip):
            return time.monotonic() - t0
        if not is_running(pid, root):
            raise LabError(f"container {root.parent.name} exited during boot; console:\n{_tail(log)}")
        if time.monotonic() - t0 > timeout:
            raise LabError(f"sshd on {root.parent.name} not answering after {timeout:.0f} s; console:\n{_tail(log)}")
        time.sleep(0.2)


def _tail(log: Path, n: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no console log)"
