"""`clusterforge validate FILE` runs without the typer app (cli/validation.validate_main): the same stdout,
stderr and exit status as the app's `validate FILE --format table`, on good, warned, wrong, unreadable files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clusterforge.cli.validation import fast_argv

ROOT = Path(__file__).parents[2]
# one of each kind of refusal: YAML, schema (unknown key, wrong type), semantic, planner, fabric, SONiC, hostile
BAD = [f"tests/data/bad/{name}.yaml" for name in (
    "yaml-syntax", "duplicate-key", "unknown-key", "wrong-type", "gluster-replicas-bricks", "impossible-power",
    "oversubscription-range", "sonic-model-without-port-map", "hostile-tier-mount")]
FILES = ["inventory/lab.yaml", "inventory/roce-128gpu.yaml", "./inventory//lab.yaml", "no-such-file.yaml",
         "inventory", *BAD]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clusterforge.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


@pytest.mark.parametrize("file", FILES)
def test_validate_file_answers_as_the_app_does(file: str) -> None:
    assert file in FILES[:5] or (ROOT / file).is_file()
    fast, app = cli("validate", file), cli("validate", file, "--format", "table")
    assert (fast.returncode, fast.stdout, fast.stderr) == (app.returncode, app.stdout, app.stderr)
    assert fast.returncode in (0, 1, 3) and "Traceback" not in fast.stderr


def test_a_file_given_twice_answers_as_the_app_does() -> None:
    """Two files is a usage error of the app, and the fast path leaves it to the app."""
    result = cli("validate", "inventory/lab.yaml", "inventory/lab.yaml")
    assert result.returncode == 2 and "Usage:" in result.stderr


@pytest.mark.parametrize("argv", [
    ["validate"], ["validate", "--help"], ["validate", "-f"], ["validate", "-"], ["validate", ""],
    ["validate", "a.yaml", "b.yaml"], ["validate", "a.yaml", "--format", "json"], ["plan", "a.yaml"],
    ["validate", "bad\udcff.yaml"], ["--version", "validate"],
])
def test_every_other_command_line_goes_to_the_app(argv: list[str]) -> None:
    assert fast_argv(argv) is None


def test_a_plain_validate_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fast_argv(["validate", "inventory/lab.yaml"]) == "inventory/lab.yaml"
    assert fast_argv(["validate", "my file.yaml"]) == "my file.yaml"


def test_shell_completion_goes_to_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(os.environ, "_CLUSTERFORGE_COMPLETE", "bash_complete")
    assert fast_argv(["validate", "inventory/lab.yaml"]) is None
