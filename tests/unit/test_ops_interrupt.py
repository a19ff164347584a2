"""Interrupts stop every child: real process trees (a child, a grandchild in its own session), real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from clusterforge.ops.proctree import descendants, snapshot, stop_tree

# A parent that starts a grandchild in a new session (as ansible-runner's pexpect does) and a plain child.
TREE = textwrap.dedent("""
    import os, subprocess, sys, time
    a = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    b = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open(sys.argv[1], "w").write(f"{a.pid} {b.pid}")
    time.sleep(600)
""")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _wait_for(path: Path) -> list[int]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return [int(x) for x in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError("the process tree did not start")


def test_stop_tree_stops_children_grandchildren_and_other_sessions(tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    parent = subprocess.Popen([sys.executable, "-c", TREE, str(marker)])
    grandchildren = _wait_for(marker)
    assert {parent.pid, *grandchildren} <= {p.pid for p in descendants(os.getpid())}
    stopped = stop_tree(grace=2)
    assert {parent.pid, *grandchildren} <= {p.pid for p in stopped}
    assert not any(_alive(pid) for pid in (parent.pid, *grandchildren))
    # nothing left running below us, and no zombie of ours
    assert [p for p in descendants(os.getpid()) if p.state not in ("Z", "X")] == []
    assert not [p for p in snapshot().values() if p.ppid == os.getpid() and p.state == "Z"]


CLI = textwrap.dedent("""
    import sys, subprocess, time
    from clusterforge.ops.interrupt import Interrupted, run_interruptible
    def work():
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        print(p.pid, flush=True)
        time.sleep(600)
    try:
        run_interruptible(work, grace=2)
    except Interrupted as exc:
        print("interrupted", exc.signame, len(exc.stopped), flush=True)
        sys.exit(exc.exit_code)
""")


def test_sigterm_stops_the_action_and_its_children() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                          os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", CLI], stdout=subprocess.PIPE, text=True, env=env)
    child = int(proc.stdout.readline())
    time.sleep(0.3)
    before = {p.pid for p in descendants(proc.pid)}
    assert child in before and len(before) == 2
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert out.split() == ["interrupted", "SIGTERM", "2"]
    assert not any(_alive(pid) for pid in before)


# With a drain: the first signal is passed on to the child (on_drain), which finishes its work and exits;
# the action then ends on its own and Interrupted is still raised. A child that ignores it is stopped when the
# drain runs out.
DRAIN = textwrap.dedent("""
    import os, signal, subprocess, sys
    from clusterforge.ops.interrupt import Interrupted, run_interruptible
    child_code = sys.argv[1]
    p = None
    def work():
        global p
        p = subprocess.Popen([sys.executable, "-c", child_code])
        print(p.pid, flush=True)
        return p.wait()
    try:
        run_interruptible(work, grace=2, drain=float(sys.argv[2]), on_drain=lambda s: os.kill(p.pid, signal.SIGINT))
    except Interrupted as exc:
        print("interrupted", exc.signame, len(exc.stopped), flush=True)
        sys.exit(exc.exit_code)
""")
SAVES = ("import signal, sys, time\n"
         "def bye(*_):\n    time.sleep(0.5); open(sys.argv[1], 'w').write('saved'); sys.exit(0)\n"
         "signal.signal(signal.SIGINT, bye)\ntime.sleep(600)\n")
STUBBORN = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(600)\n"


def _drain_run(child: str, drain: float, *extra: str) -> tuple[subprocess.Popen, int, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                          os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", DRAIN, child, str(drain), *extra], stdout=subprocess.PIPE,
                            text=True, env=env)
    pid = int(proc.stdout.readline())
    time.sleep(0.3)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    return proc, pid, started


def test_a_drain_lets_the_child_finish_and_still_reports_the_interrupt(tmp_path: Path) -> None:
    marker = tmp_path / "saved"
    proc, pid, _ = _drain_run(SAVES.replace("sys.argv[1]", repr(str(marker))), 30)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert out.split()[-3:] == ["interrupted", "SIGTERM", "0"]  # it had ended on its own: nothing to stop
    assert marker.read_text() == "saved"
    assert not _alive(pid)


def test_a_drain_that_runs_out_stops_the_child() -> None:
    proc, pid, started = _drain_run(STUBBORN, 1.5)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert out.split()[-3:] == ["interrupted", "SIGTERM", "1"]
    assert time.monotonic() - started >= 1.5
    assert not _alive(pid)
