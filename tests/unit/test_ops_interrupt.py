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
