"""`clusterforge kubeconfig`: its --stack name passes the grammar every other command's does (a usage error,
exit 2, before the declaration or the state dir is touched), and an engine that fails is an environment
problem (exit 3) said in one line, never a traceback."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, run_cli, workdir

from clusterforge.pulumi.engine import ENGINE_VERSION

# A stand-in engine: it answers `pulumi version` with the pinned release and fails every other command
# the way the engine fails (a message on stderr, a non-zero exit).
FAILING_ENGINE = f"""#!/bin/sh
if [ "$1" = version ]; then echo v{ENGINE_VERSION}; exit 0; fi
echo "error: could not read the stack: stand-in engine failure" >&2
exit 255
"""


HOSTILE_STACKS = ["../outside", "..", ".hidden", "a/b", "-x", "a" * 101, "lab\nx"]


@pytest.fixture()
def lab(tmp_path: Path) -> Path:
    path = workdir(tmp_path) / "lab.yaml"
    path.write_text(LAB_TEXT)
    return path


@pytest.mark.parametrize("stack", HOSTILE_STACKS)
def test_a_stack_name_outside_the_grammar_is_a_usage_error(lab: Path, tmp_path: Path, capsys, stack: str):
    state = tmp_path / "state"
    outcome = run_cli(capsys, "kubeconfig", str(lab), "--stack", stack, "--state-dir", str(state))
    assert outcome.code == 2, (outcome.code, outcome.err[-2000:])
    assert "Traceback" not in outcome.err
    assert "is not allowed" in outcome.err
    assert not state.exists()


def test_an_inventory_stem_outside_the_grammar_needs_a_stack(tmp_path: Path, capsys):
    path = workdir(tmp_path) / ".hidden.yaml"
    path.write_text(LAB_TEXT)
    outcome = run_cli(capsys, "kubeconfig", str(path), "--state-dir", str(tmp_path / "state"))
    assert outcome.code == 2 and "pass --stack" in outcome.err, outcome.err


def test_an_engine_failure_exits_3_with_its_message(lab: Path, tmp_path: Path, capsys, monkeypatch):
    """The failing engine is the state dir's; where a checkout engine is found first, the backend it is given
    (a directory under /dev/null) makes that one fail as well."""
    state = tmp_path / "state"
    engine = state / "engine" / "bin" / "pulumi"
    engine.parent.mkdir(parents=True)
    engine.write_text(FAILING_ENGINE)
    engine.chmod(engine.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CLUSTERFORGE_STATE_DIR", str(state))
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "unit-test")
    monkeypatch.setenv("PATH", os.pathsep.join([str(engine.parent), os.environ.get("PATH", "")]))
    outcome = run_cli(capsys, "kubeconfig", str(lab), "--stack", "lab", "--backend-url",
                      "file:///dev/null/no-backend")
    assert "Traceback" not in outcome.err + outcome.out
    assert outcome.code == 3, (outcome.code, outcome.err[-2000:])
    lines = [line for line in outcome.err.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("error: "), outcome.err
    assert outcome.out == ""


@pytest.mark.parametrize("command", [["roll"], ["replace"], ["verify"]], ids=lambda c: c[0])
def test_every_command_that_reads_a_stacks_kubeconfig_checks_the_name_first(lab: Path, tmp_path: Path, capsys,
                                                                             command: list[str]):
    args = [*command, str(lab), *(["su01-r01-gpu01"] if command == ["replace"] else []), "--stack", "../outside"]
    outcome = run_cli(capsys, *args)
    assert outcome.code == 2, (outcome.code, outcome.err[-2000:])
    assert "stack name '../outside'" in outcome.err and "Traceback" not in outcome.err
