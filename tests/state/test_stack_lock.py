"""The stack lock with two processes, on both backends: a file backend's flock and a PostgreSQL table
(a real server on loopback, tests/state/state_fixtures.py).

A child process takes the lock and keeps it; this process then tries the same stack, is refused with
who/since/where, and takes the lock (saying it cleared a gone run's record) once the child is killed
or, on PostgreSQL, once its lease runs out while it is stopped (SIGSTOP: alive, but not renewing).
"""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

import pytest
from state_fixtures import PgServer, hold_lock

from clusterforge.pulumi import stacklock
from clusterforge.pulumi.stacklock import StackLocked, held, store_for

pytestmark = pytest.mark.slow

STACK = "su01"


@pytest.fixture(params=["file", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "file":
        return f"file://{tmp_path / 'pulumi'}"
    server: PgServer = request.getfixturevalue("pg")
    server.psql("DROP TABLE IF EXISTS clusterforge_stack_locks;")
    return server.url()


def _said() -> tuple[list[str], object]:
    lines: list[str] = []
    return lines, lines.append


def test_a_second_run_is_refused_naming_the_holder(url: str) -> None:
    holder = hold_lock(url, STACK, env={"CLUSTERFORGE_LOCK_NOTE": "ci job 42"})
    try:
        started = time.monotonic()
        with pytest.raises(StackLocked) as refused, held(store_for(url), STACK, "up", 60, print):
            pytest.fail("took a lock another process holds")
        assert time.monotonic() - started < 10  # at once, not after waiting
        text = str(refused.value)
        assert f"pid {holder.pid}" in text and socket.gethostname() in text and "ci job 42" in text
        assert refused.value.holder.acquired_at.endswith("Z") and "since " in text
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holder_is_reported_and_cleared_by_the_next_run(url: str) -> None:
    holder = hold_lock(url, STACK)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    lines, say = _said()
    with held(store_for(url), STACK, "up", 60, say) as mine:
        now = store_for(url).holder(STACK)
        assert now is not None and now.token == mine.token and now.pid == os.getpid()
    assert len(lines) == 1 and f"pid {holder.pid}" in lines[0] and "cleared the lock of a run that is gone" in lines[0]
    assert store_for(url).holder(STACK) is None  # released at the end of the block


def test_a_released_lock_leaves_nothing_to_report(url: str) -> None:
    lines, say = _said()
    with held(store_for(url), STACK, "up", 60, say):
        pass
    with held(store_for(url), STACK, "destroy", 60, say):
        pass
    assert lines == []


def test_an_expired_lease_is_cleared_on_postgres(pg: PgServer) -> None:
    pg.psql("DROP TABLE IF EXISTS clusterforge_stack_locks;")
    url = pg.url()
    holder = hold_lock(url, STACK, lease_s=3)
    os.kill(holder.pid, signal.SIGSTOP)  # alive on this host, but no longer renewing
    try:
        with pytest.raises(StackLocked), held(store_for(url), STACK, "up", 3, print):
            pass
        time.sleep(4.5)
        lines, say = _said()
        with held(store_for(url), STACK, "up", 3, say):
            pass
        assert len(lines) == 1 and "past its lease of 3 s" in lines[0], lines
    finally:
        holder.kill()
        holder.wait()


def test_a_renewing_holder_outlives_its_lease(pg: PgServer) -> None:
    pg.psql("DROP TABLE IF EXISTS clusterforge_stack_locks;")
    url = pg.url()
    holder = hold_lock(url, STACK, lease_s=3)
    try:
        time.sleep(4.5)
        with pytest.raises(StackLocked, match="last renewed [0-2] s ago"), held(store_for(url), STACK, "up", 3, print):
            pass
    finally:
        holder.kill()
        holder.wait()


def test_a_wrong_password_is_an_error_that_does_not_show_it(pg: PgServer) -> None:
    url = pg.url().replace(pg.password, "not-the-Password-42")
    with pytest.raises(RuntimeError) as failed:
        store_for(url).holder(STACK)
    assert "not-the-Password-42" not in str(failed.value) and "****" in str(failed.value)


@pytest.mark.parametrize(("environ", "config", "lease"), [
    ({}, {}, 600), ({}, {"lockLease": "120"}, 120), ({"CLUSTERFORGE_LOCK_LEASE_S": "30"}, {"lockLease": "120"}, 30),
])
def test_the_lease_comes_from_the_environment_else_the_stack_settings(environ: dict[str, str],
                                                                     config: dict[str, str], lease: int) -> None:
    assert stacklock.lease_seconds(config, environ) == lease


@pytest.mark.parametrize("value", ["ten", "1", "-5"])
def test_a_lease_that_is_not_seconds_is_refused_naming_the_setting(value: str) -> None:
    with pytest.raises(ValueError, match="clusterforge:lockLease"):
        stacklock.lease_seconds({"lockLease": value}, {})


RELEASER = """\
import sys, time
from clusterforge.pulumi import stacklock
url, stack, hold_s = sys.argv[1], sys.argv[2], float(sys.argv[3])
with stacklock.held(stacklock.store_for(url), stack, "up", 60, lambda line: print(line, flush=True)):
    print("held", flush=True)
    time.sleep(hold_s)
"""


def test_a_queued_run_waits_for_the_holder_then_takes_the_lock(url: str) -> None:
    """A CI apply after a merge (`up --lock-wait`): another run holds the stack and finishes after ~2 s; this run
    says it waits, naming the holder, and takes the lock once it is released, not before; a wait too short ends
    with StackLocked saying how long it waited."""
    import subprocess
    import sys

    from state_fixtures import SRC

    holder = subprocess.Popen([sys.executable, "-c", RELEASER, url, STACK, "2"], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(SRC)})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        lines, say = _said()
        with pytest.raises(StackLocked) as short, held(store_for(url), STACK, "up", 60, say, wait_s=0.5, poll_s=0.2):
            pytest.fail("took a lock another process holds")
        assert "after waiting" in str(short.value) and f"pid {holder.pid}" in str(short.value)
        with held(store_for(url), STACK, "up", 60, say, wait_s=60, poll_s=0.2):
            assert holder.wait(timeout=5) == 0  # taken once the holder released it and ended, not before
        waits = [line for line in lines if "waiting for it" in line]
        assert waits and f"pid {holder.pid}" in waits[0] and "(queued)" in waits[0]
        assert any("took the lock after waiting" in line for line in lines)
        assert not any("gone" in line for line in lines)  # a normal release, nothing stale cleared
    finally:
        holder.kill()
        holder.wait()
