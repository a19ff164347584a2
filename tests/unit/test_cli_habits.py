"""CLI habits: --version, --format json on every command that reports, help that keeps bracketed
text, --target with choices, shell completion, and the export commands' JSON and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer

from clusterforge.cli import app

ROOT = Path(__file__).parents[2]
# Commands that report nothing on stdout: they replace the process (ssh).
NOT_REPORTING = {"lab ssh"}


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clusterforge.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={**os.environ, **(env or {})})


def _commands(group, prefix: str = "") -> dict:
    """'group sub' -> command, for the whole tree (typer's own click classes: duck-typed)."""
    found: dict = {}
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        if hasattr(command, "commands"):
            found.update(_commands(command, path + " "))
        else:
            found[path] = command
    return found


COMMANDS = _commands(typer.main.get_command(app))


def _choices(param) -> list[str]:
    return [getattr(c, "value", c) for c in (param.type_descriptor.choices or ())]


def test_version_is_the_package_version() -> None:
    result = cli("--version")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert (result.returncode, result.stdout.strip()) == (0, f"clusterforge {version}")


@pytest.mark.parametrize("name", sorted(set(COMMANDS) - NOT_REPORTING))
def test_every_reporting_command_takes_format_json(name: str) -> None:
    (option,) = [p for p in COMMANDS[name].params if p.name == "format"]
    assert "json" in _choices(option)


def test_command_tree_is_the_expected_one() -> None:
    """Guard: the parametrized test above sees the whole tree (new groups included)."""
    assert {"validate", "plan", "render", "up", "preview", "verify", "lab status", "export containerlab",
            "export batfish", "export device-types", "collection build"} <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(n for n, c in COMMANDS.items() if any(p.name == "target" for p in c.params)))
def test_target_options_offer_their_choices(name: str) -> None:
    (option,) = [p for p in COMMANDS[name].params if p.name == "target"]
    assert len(_choices(option)) >= 2


def test_help_keeps_bracketed_text() -> None:
    result = cli("up", "--help", env={"COLUMNS": "200"})
    assert result.returncode == 0
    assert "[default: the inventory's stem]" in result.stdout
    assert "<lab|files|ssh>" in result.stdout or "[lab|files|ssh]" in result.stdout


def _complete(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """The installed `clusterforge` script: completion keys on the program name."""
    script = Path(sys.executable).parent / "clusterforge"
    return subprocess.run([str(script), *args], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, **env})


def test_shell_completion_completes_commands_and_choices() -> None:
    commands = _complete(env={"_CLUSTERFORGE_COMPLETE": "complete_bash", "COMP_WORDS": "clusterforge ex",
                              "COMP_CWORD": "1"})
    assert commands.stdout.split() == ["export"]
    targets = _complete(env={"_CLUSTERFORGE_COMPLETE": "complete_bash", "COMP_WORDS": "clusterforge up x --target ",
                       "COMP_CWORD": "4"})
    assert targets.stdout.split() == ["lab", "files", "ssh"]
    checks = _complete(env={"_CLUSTERFORGE_COMPLETE": "complete_bash",
                            "COMP_WORDS": "clusterforge verify x --check c", "COMP_CWORD": "4"})
    assert checks.stdout.split() == ["container_runtime", "cuda"]
    every = _complete(env={"_CLUSTERFORGE_COMPLETE": "complete_bash",
                           "COMP_WORDS": "clusterforge verify x --check ", "COMP_CWORD": "4"})
    assert {"kernel", "driver", "roce", "time"} <= set(every.stdout.split())
    for command in ("roll", "replace"):  # the other commands gated by host checks complete the same names
        same = _complete(env={"_CLUSTERFORGE_COMPLETE": "complete_bash",
                              "COMP_WORDS": f"clusterforge {command} x --check c", "COMP_CWORD": "4"})
        assert same.stdout.split() == ["cuda", "container_runtime"], command
    script = _complete({"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}, "--show-completion", "bash")
    assert script.returncode == 0 and "_CLUSTERFORGE_COMPLETE=complete_bash" in script.stdout


def test_validate_and_render_report_json(tmp_path: Path) -> None:
    validated = cli("validate", "inventory/lab.yaml", "--format", "json")
    assert validated.returncode == 0, validated.stderr
    assert json.loads(validated.stdout)["ok"] is True
    rendered = cli("render", "inventory/lab.yaml", "-o", str(tmp_path / "out"), "--format", "json")
    document = json.loads(rendered.stdout)
    assert "assets.csv" in document["files"] and (tmp_path / "out" / "assets.csv").is_file()


@pytest.mark.parametrize("kind, first", [("containerlab", "clab.yml"), ("batfish", "batfish/layer1_topology.json"),
                                         ("device-types", None)])
def test_exports_write_what_their_json_lists(kind: str, first: str | None, tmp_path: Path) -> None:
    result = cli("export", kind, "inventory/lab.yaml", "-o", str(tmp_path / kind), "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["files"] and all((tmp_path / kind / f).is_file() for f in document["files"])
    if first:
        assert first in document["files"]


def test_export_refuses_an_unknown_image_kind(tmp_path: Path) -> None:
    result = cli("export", "containerlab", "inventory/lab.yaml", "-o", str(tmp_path), "--image", "sonic=x:1")
    assert result.returncode == 2 and "KIND one of sonic-vs" in result.stderr
    assert not list(tmp_path.iterdir())
