"""One stack, two operators, one PostgreSQL backend: the real CLI and engine against a real server on loopback.

The stack is the repository's program on the lab declaration with the `files` target (switch configs
written into one directory; no hosts, no Ansible). Two state dirs stand for two operators' machines:
they share the backend URL, the team's passphrase (PULUMI_CONFIG_PASSPHRASE) and the stack's one
setting beyond those the CLI manages, clusterforge:switchConfigDir (a path both operators agree on, as
docs/state.md says for settings that name a place).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pulumi import automation as auto
from state_fixtures import SRC, PgServer, hold_lock

from clusterforge.paths import workspace
from clusterforge.pulumi.automation import Backend, engine_binary, open_stack
from clusterforge.pulumi.recovery import engine_locks
from clusterforge.pulumi.stacklock import store_for

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

INVENTORY = workspace() / "inventory" / "lab.yaml"
STACK = "team"
PASSPHRASE = "the team's passphrase"
APPLY = ("--target", "files", "--no-provision", "--no-verify", "--yes")


@pytest.fixture(scope="module")
def operators(tmp_path_factory: pytest.TempPathFactory, pg: PgServer) -> tuple[Path, Path]:
    if not engine_binary().exists():
        pytest.skip(f"{engine_binary()} is absent (build it with scripts/setup-pulumi.sh)")
    switches = tmp_path_factory.mktemp("switch-configs")
    both = tmp_path_factory.mktemp("operator-a"), tmp_path_factory.mktemp("operator-b")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PULUMI_CONFIG_PASSPHRASE", PASSPHRASE)
        for state_dir in both:
            handle = open_stack(STACK, None, Backend.resolve(state_dir, pg.url()))
            handle.set_config("clusterforge:switchConfigDir", auto.ConfigValue(value=str(switches)))
    return both


def cli(state_dir: Path, pg: PgServer, *args: str, passphrase: str | None = PASSPHRASE,
        wait: bool = True) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PULUMI_CONFIG_PASSPHRASE", "CLUSTERFORGE_"))}
    env.update({"CLUSTERFORGE_STATE_DIR": str(state_dir), "CLUSTERFORGE_BACKEND_URL": pg.url(),
                "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])})
    if passphrase is not None:
        env["PULUMI_CONFIG_PASSPHRASE"] = passphrase
    argv = [sys.executable, "-c", "from clusterforge.cli import main; main()", *args]
    if not wait:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def applied(operators: tuple[Path, Path], pg: PgServer) -> subprocess.CompletedProcess[str]:
    done = cli(operators[0], pg, "up", str(INVENTORY), "--stack", STACK, *APPLY)
    assert isinstance(done, subprocess.CompletedProcess)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_the_first_up_creates_the_stack_in_the_database(applied: subprocess.CompletedProcess[str],
                                                        pg: PgServer) -> None:
    assert "stack team updated" in applied.stdout
    assert f".pulumi/stacks/clusterforge-cluster/{STACK}.json" in pg.psql("SELECT key FROM pulumi_state;")


def test_the_password_is_never_printed(applied: subprocess.CompletedProcess[str], pg: PgServer) -> None:
    assert pg.password not in applied.stdout + applied.stderr


def test_a_second_operator_sees_the_stack_unchanged(applied: subprocess.CompletedProcess[str],
                                                    operators: tuple[Path, Path], pg: PgServer) -> None:
    done = cli(operators[1], pg, "preview", str(INVENTORY), "--stack", STACK, "--target", "files", "--no-provision",
               "--no-verify", "--expect-no-changes", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]


def test_a_second_operator_without_the_passphrase_is_told_how_to_join(applied: subprocess.CompletedProcess[str],
                                                                      operators: tuple[Path, Path],
                                                                      pg: PgServer) -> None:
    done = cli(operators[1], pg, "preview", str(INVENTORY), "--stack", STACK, passphrase=None)
    assert done.returncode == 3 and "PULUMI_CONFIG_PASSPHRASE" in done.stderr and "--passphrase-file" in done.stderr
    assert pg.password not in done.stderr


def test_an_up_while_another_holds_the_stack_is_refused_at_once(applied: subprocess.CompletedProcess[str],
                                                                operators: tuple[Path, Path], pg: PgServer) -> None:
    holder = hold_lock(pg.url(), STACK, env={"CLUSTERFORGE_LOCK_NOTE": "operator A's laptop"})
    try:
        done = cli(operators[1], pg, "up", str(INVENTORY), "--stack", STACK, *APPLY)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 1
    assert f"stack {STACK} is locked" in done.stderr and f"(pid {holder.pid})" in done.stderr
    assert "operator A's laptop" in done.stderr and "since " in done.stderr
    assert "stack team updated" not in done.stdout


def test_a_killed_up_is_recovered_by_the_next_with_a_message(applied: subprocess.CompletedProcess[str],
                                                             operators: tuple[Path, Path], pg: PgServer) -> None:
    run = cli(operators[0], pg, "up", str(INVENTORY), "--stack", STACK, *APPLY, wait=False)
    assert isinstance(run, subprocess.Popen)
    deadline = time.monotonic() + 120
    while not engine_locks(pg.url(), STACK) and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.1)
    assert engine_locks(pg.url(), STACK), "the engine never took its lock"
    os.killpg(run.pid, signal.SIGKILL)  # the CLI, the engine and the program, at once
    run.wait()
    left = store_for(pg.url()).holder(STACK)
    assert left is not None and left.pid == run.pid  # the killed run's record is still there
    done = cli(operators[1], pg, "up", str(INVENTORY), "--stack", STACK, *APPLY)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cleared the lock of a run that is gone (`up` by" in done.stderr and f"(pid {run.pid})" in done.stderr
    assert "released the lock of an interrupted run" in done.stderr
    assert store_for(pg.url()).holder(STACK) is None and engine_locks(pg.url(), STACK) == []


def test_unlock_clears_a_gone_run_after_confirmation(operators: tuple[Path, Path], pg: PgServer) -> None:
    holder = hold_lock(pg.url(), "other")
    holder.kill()
    holder.wait()
    declined = cli(operators[0], pg, "unlock", "--stack", "other")  # no terminal to answer: declined
    assert declined.returncode == 1 and f"(pid {holder.pid})" in declined.stderr
    assert store_for(pg.url()).holder("other") is not None
    done = cli(operators[0], pg, "unlock", "--stack", "other", "--yes")
    assert done.returncode == 0 and "cleared the clusterforge lock" in done.stdout, done.stderr
    assert store_for(pg.url()).holder("other") is None


def test_unlock_refuses_a_holder_running_on_this_machine(operators: tuple[Path, Path], pg: PgServer) -> None:
    holder = hold_lock(pg.url(), "busy")
    try:
        done = cli(operators[0], pg, "unlock", "--stack", "busy", "--yes")
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 1 and f"pid {holder.pid} still runs on this machine" in done.stderr
