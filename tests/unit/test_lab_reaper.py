"""lab.reaper: the parent libvirtd runs under, so the QEMU processes it daemonizes are reaped when they exit.

Real processes: an orphaned grandchild (as a daemonized QEMU is) becomes the reaper's child and is reaped
when it ends, not left a zombie; the command's exit status and a forwarded SIGTERM come back."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_CHILD_SUBREAPER) is Linux")


def _reaper(*argv: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "clusterforge.lab.reaper", *argv])


def _state(pid: int) -> tuple[str, int] | None:
    try:
        fields = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                      if ":\t" in line)
    except FileNotFoundError:
        return None
    return fields["State"].split()[0], int(fields["PPid"])


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def test_an_orphan_is_adopted_and_reaped_not_left_a_zombie(tmp_path):
    pidfile = tmp_path / "orphan.pid"
    # the inner shell starts a sleeper and exits at once: the sleeper is an orphan, as a daemonized QEMU is
    proc = _reaper("sh", "-c", f"sh -c 'sleep 1 & echo $! > {pidfile}'; sleep 3")
    try:
        deadline = time.monotonic() + 10
        while not (pidfile.is_file() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        orphan = int(pidfile.read_text())
        time.sleep(0.3)
        state = _state(orphan)
        assert state is not None and state[1] == proc.pid, state  # adopted by the reaper, not by PID 1
        time.sleep(1.5)
        assert _state(orphan) is None  # gone from /proc: reaped, not a zombie
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()


def test_the_commands_exit_status_comes_back():
    assert _reaper("sh", "-c", "exit 7").wait(timeout=10) == 7


def test_sigterm_is_passed_on_to_the_command():
    proc = _reaper("sleep", "30")
    try:
        # once the command runs, the reaper forwards (a signal before its fork would meet Python's default action)
        deadline = time.monotonic() + 10
        while not _children(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _children(proc.pid), "the reaper never started its command"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
