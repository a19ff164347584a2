"""`up` that saves the state once (`--checkpoints auto` on a stack of switch configs that does not provision):
real CLI, engine, dynamic providers and file backend on superpod-4su (608 resources).

* The default for such a stack is one save when the run closes, and the CLI says so; the state then
  holds every resource and a second `up` changes nothing.
* Killed outright mid-run (SIGKILL to the CLI, the engine and its providers): that run's record is
  lost, as `--checkpoints end` says, so the state reads as before it; the next `up` creates again
  what the killed run had written, converges on the rendered files (a preview after it diffs every
  delivered file against the render: 0 changes) and `destroy` removes every file, those the killed run
  wrote included.
* Ctrl-C mid-run: the engine closes the run and saves what it finished, with no pending operation; the
  next `up` does the rest.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from polling import until
from pulumi_fixtures import REPO, cli_env, state_file

from clusterforge.pulumi import automation
from clusterforge.pulumi.recovery import lock_files

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

INVENTORY = REPO / "inventory" / "superpod-4su.yaml"
SAVED_ONCE = "state: saved once, when the engine closes the run (auto: switch configs and components only"


def _cli(backend, *args: str) -> subprocess.Popen:
    argv = [sys.executable, "-c", "from clusterforge.cli import main; main()", *args]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(backend),
                            start_new_session=True)


def _up(backend, stack: str) -> subprocess.Popen:
    return _cli(backend, "up", str(INVENTORY), "--stack", stack, "--target", "files", "--no-provision",
                "--no-verify", "--yes")


def _open(backend, stack: str, configs: Path) -> None:
    automation.open_stack(stack, {"inventory": str(INVENTORY), "target": "files", "provision": "false",
                                  "verify": "false", "switchConfigDir": str(configs)}, backend)


def _resources(backend, stack: str) -> list[dict]:
    path = state_file(backend, stack)
    if not path.exists():
        return []
    latest = json.loads(path.read_text())["checkpoint"].get("latest") or {}
    return latest.get("resources") or []


def _switch_configs(backend, stack: str) -> dict[str, list[str]]:
    return {r["outputs"]["device"]: r["outputs"]["written"] for r in _resources(backend, stack)
            if r["type"].endswith(":SwitchConfig")}


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()} if root.exists() else set()


def _stopped_midway(backend, stack: str, configs: Path) -> subprocess.Popen:
    """An `up` frozen (SIGSTOP to its whole session) once it has written its first switch config."""
    cli = _up(backend, stack)
    until("the first switch config", lambda: _files(configs) or cli.poll() is not None, 300, 0.02)
    os.killpg(cli.pid, signal.SIGSTOP)
    assert cli.poll() is None, "the run ended before it could be stopped midway"
    return cli


def test_one_save_at_the_end_converges_and_a_second_up_changes_nothing(backend, tmp_path: Path) -> None:
    configs = tmp_path / "switches"
    _open(backend, "ckpt-auto", configs)
    cli = _up(backend, "ckpt-auto")
    out, err = cli.communicate(timeout=600)
    assert cli.returncode == 0, err[-3000:]
    assert SAVED_ONCE in err
    written = _switch_configs(backend, "ckpt-auto")
    assert len(written) > 100  # superpod-4su's data, storage, management and oob switches
    assert _files(configs) == {f"{device}/{f}" for device, files in written.items() for f in files}
    again = _up(backend, "ckpt-auto")
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err[-3000:]
    assert "0 to create, 0 to update, 0 to replace, 0 to delete" in out, out[-2000:]


def test_a_run_killed_outright_is_finished_by_the_next_up_and_destroy_leaves_nothing(backend, tmp_path: Path) -> None:
    configs = tmp_path / "switches"
    _open(backend, "ckpt-kill", configs)
    cli = _stopped_midway(backend, "ckpt-kill", configs)
    before = _files(configs)
    os.killpg(cli.pid, signal.SIGKILL)  # the CLI, the engine, its language host and providers at once
    cli.communicate(timeout=30)
    assert before, "nothing was written before the kill"
    assert _switch_configs(backend, "ckpt-kill") == {}  # the record of the killed run is lost, as documented

    again = _up(backend, "ckpt-kill")
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err[-3000:]
    assert "released the lock of an interrupted run" in err
    written = _switch_configs(backend, "ckpt-kill")
    expected = {f"{device}/{f}" for device, files in written.items() for f in files}
    assert before <= expected and _files(configs) == expected
    assert lock_files(backend.url, "ckpt-kill") == []
    preview = _cli(backend, "preview", str(INVENTORY), "--stack", "ckpt-kill", "--target", "files",
                   "--no-provision", "--no-verify", "--expect-no-changes")
    out, err = preview.communicate(timeout=600)
    assert preview.returncode == 0, (out + err)[-3000:]  # every delivered file equals its render

    destroy = _cli(backend, "destroy", "--stack", "ckpt-kill", "--yes")
    out, err = destroy.communicate(timeout=600)
    assert destroy.returncode == 0, err[-3000:]
    assert _files(configs) == set()
    assert _resources(backend, "ckpt-kill") == []


def test_ctrl_c_saves_what_the_run_finished(backend, tmp_path: Path) -> None:
    configs = tmp_path / "switches"
    _open(backend, "ckpt-int", configs)
    cli = _stopped_midway(backend, "ckpt-int", configs)
    os.killpg(cli.pid, signal.SIGINT)  # a terminal's Ctrl-C, delivered as the run resumes
    os.killpg(cli.pid, signal.SIGCONT)
    out, err = cli.communicate(timeout=300)
    assert cli.returncode == 130, err[-3000:]
    assert "up of stack ckpt-int interrupted by SIGINT" in err
    recorded = _resources(backend, "ckpt-int")
    assert len(recorded) > 1, err[-3000:]  # the engine saved what it finished: more than the Stack itself
    state = json.loads(state_file(backend, "ckpt-int").read_text())["checkpoint"]["latest"]
    assert not state.get("pending_operations")
    assert lock_files(backend.url, "ckpt-int") == []
    for device, files in _switch_configs(backend, "ckpt-int").items():  # what the state records is on disk
        assert {f"{device}/{f}" for f in files} <= _files(configs)

    again = _up(backend, "ckpt-int")
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err[-3000:]
    assert len(_resources(backend, "ckpt-int")) > len(recorded)
    written = _switch_configs(backend, "ckpt-int")
    assert _files(configs) == {f"{device}/{f}" for device, files in written.items() for f in files}
