"""What an interrupted engine run leaves behind, cleared by clusterforge.pulumi.recovery — real engine, file backend.

The stack is the repository's program on the lab declaration with the `files` target (switch configs
into a temp dir; no hosts). The lock file an engine leaves when killed is written as the engine
writes its own (pkg/backend/diy/lock.go: pid, username, hostname, timestamp), by a process that
has exited; a pending create is what the checkpoint holds for a create that never finished.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from pulumi import automation as auto
from pulumi_fixtures import LAB_INVENTORY

from clusterforge.pulumi import automation
from clusterforge.pulumi.recovery import StackBusy, lock_files, recover

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

STACK = "recovery"


@pytest.fixture(scope="module")
def stack(backend, tmp_path_factory):
    out = tmp_path_factory.mktemp("switch-configs")
    settings = {"inventory": str(LAB_INVENTORY), "target": "files", "provision": "false", "verify": "false",
                "switchConfigDir": str(out)}
    handle = automation.open_stack(STACK, settings, backend)
    automation.up(handle)
    return handle


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _lock(backend, pid: int) -> Path:
    locks = Path(backend.url.removeprefix("file://")) / ".pulumi" / "locks" / "organization" / automation.PROJECT
    path = locks / STACK / f"{uuid.uuid4()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": pid, "username": "root", "hostname": socket.gethostname(),
                                "timestamp": "2026-12-01T05:00:00Z"}))
    return path


def test_a_stale_lock_blocks_the_engine_until_recovered(stack, backend):
    lock = _lock(backend, _dead_pid())
    assert lock_files(backend.url, STACK) == [lock]
    with pytest.raises(auto.CommandError, match="currently locked"):
        automation.up(stack)
    result = recover(stack, backend.url, STACK)
    assert len(result.released) == 1 and not lock.exists()
    assert automation.up(stack).summary.changes == 0


def test_a_live_lock_is_reported_and_kept(stack, backend):
    import os

    lock = _lock(backend, os.getpid())
    try:
        with pytest.raises(StackBusy, match=f"pid {os.getpid()}"):
            recover(stack, backend.url, STACK)
        assert lock.exists()
    finally:
        lock.unlink()
