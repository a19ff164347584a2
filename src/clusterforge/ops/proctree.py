"""This process's descendants, read from /proc, and stopping them all (process groups included).

Used when a command is interrupted: the Pulumi engine, its language host, the dynamic providers
and the ansible-playbook runs they started (ansible-runner puts those in their own session) all
stop, so nothing keeps changing hosts after the command has returned. Lab containers and the
lab's apt proxy are long-lived on purpose and are left alone (``keep``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Proc", "alive", "become_subreaper", "descendants", "lab_daemon", "leftovers_of", "orphaned_plugins", "reap",
           "snapshot", "stop_tree"]

PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    pgid: int
    state: str
    argv: tuple[str, ...]

    @property
    def command(self) -> str:
        return " ".join(self.argv)[:200] or f"[pid {self.pid}]"


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (a zombie does not)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return True


def _read(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = tuple(a.decode(errors="replace") for a in f.read().split(b"\0") if a)
    except (OSError, IndexError):
        return None
    return Proc(pid, int(fields[1]), int(fields[2]), fields[0], argv)


def snapshot() -> dict[int, Proc]:
    procs = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            proc = _read(int(entry))
            if proc is not None:
                procs[proc.pid] = proc
    return procs


def lab_daemon(proc: Proc) -> bool:
    """A lab container (systemd-nspawn or its cgroup launcher), the lab's apt proxy or its NTP server."""
    argv = proc.argv
    if not argv:
        return False
    return (argv[0].endswith("systemd-nspawn") or (argv[0] == "/bin/sh" and "cf-nspawn" in argv)
            or "clusterforge.lab.aptproxy" in argv
            or (argv[0].endswith("chronyd") and any("/timeserver/" in a for a in argv)))  # lab.timeserve


def descendants(root: int, procs: dict[int, Proc] | None = None,
                keep: Callable[[Proc], bool] = lab_daemon) -> list[Proc]:
    """Every live descendant of ``root``, parents before children; a kept process hides its subtree."""
    procs = procs if procs is not None else snapshot()
    children: dict[int, list[Proc]] = {}
    for proc in procs.values():
        children.setdefault(proc.ppid, []).append(proc)
    out, todo = [], [root]
    while todo:
        for child in sorted(children.get(todo.pop(0), []), key=lambda p: p.pid):
            if keep(child):
                continue
            out.append(child)
            todo.append(child.pid)
    return out


def leftovers_of(directory: str, procs: dict[int, Proc] | None = None) -> list[Proc]:
    """Processes working in ``directory`` (their cwd) or naming a path under it: a run's plugins and playbooks."""
    procs = procs if procs is not None else snapshot()
    mine = {os.getpid(), os.getppid()}
    prefix = directory.rstrip("/") + "/"
    found = []
    for proc in procs.values():
        if proc.pid in mine or proc.state in ("Z", "X"):
            continue
        try:
            cwd = os.readlink(f"/proc/{proc.pid}/cwd")
        except OSError:
            cwd = ""
        if cwd == directory.rstrip("/") or cwd.startswith(prefix) or any(prefix in arg for arg in proc.argv):
            found.append(proc)
    return found


def _pulumi_plugin(proc: Proc) -> bool:
    exe = proc.argv[0].rsplit("/", 1)[-1] if proc.argv else ""
    return exe.startswith("pulumi-language-") or exe.startswith("pulumi-resource-") or "pulumi.dynamic" in proc.argv


def orphaned_plugins(procs: dict[int, Proc] | None = None) -> list[Proc]:
    """Pulumi plugins (language hosts, providers) whose engine is gone: their parent is not a pulumi process."""
    procs = procs if procs is not None else snapshot()
    found = []
    for proc in procs.values():
        if proc.state in ("Z", "X") or not _pulumi_plugin(proc):
            continue
        parent = procs.get(proc.ppid)
        exe = parent.argv[0].rsplit("/", 1)[-1] if parent and parent.argv else ""
        if not exe.startswith("pulumi"):
            found.append(proc)
    return found


def _signal(procs: Iterable[Proc], sig: int, own_pgid: int) -> None:
    for proc in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(proc.pid, sig)
        if proc.pgid != own_pgid and proc.pgid == proc.pid:  # a group leader (ansible-playbook): its workers too
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pgid, sig)


def stop_tree(root: int | None = None, *, grace: float = 5.0, keep: Callable[[Proc], bool] = lab_daemon,
              roots: Iterable[int] = ()) -> list[Proc]:
    """SIGTERM every descendant of ``root`` (default: this process) and every process in ``roots``
    with its descendants, SIGKILL what is left after ``grace`` seconds, reap what is ours.
    Returns what was found running."""
    root = os.getpid() if root is None else root
    extra = set(roots)
    own_pgid = os.getpgid(0)
    found: dict[int, Proc] = {}
    deadline = time.monotonic() + grace
    sig = signal.SIGTERM
    while True:
        procs = snapshot()
        tree = descendants(root, procs, keep=keep)
        for pid in sorted(extra):
            if pid in procs:
                tree += [procs[pid], *descendants(pid, procs, keep=keep)]
        live = [p for p in {p.pid: p for p in tree}.values() if p.state not in ("Z", "X")]
        for proc in live:
            found.setdefault(proc.pid, proc)
        if not live:
            break
        if time.monotonic() > deadline:
            if sig == signal.SIGKILL and time.monotonic() > deadline + 10:
                break
            sig = signal.SIGKILL
        _signal(live, sig, own_pgid)
        reap()
        time.sleep(0.1)
    reap()
    return sorted(found.values(), key=lambda p: p.pid)


def reap() -> list[int]:
    """Collect every exited child of this process (adopted orphans too); returns their pids."""
    done = []
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        done.append(pid)
    return done


def become_subreaper() -> bool:
    """Orphans of our descendants re-parent to this process instead of PID 1, so they stay findable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
