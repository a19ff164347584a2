"""Every command's help has an example, the command lists show whole summaries (no "..."), every
declaration argument reads INVENTORY, `[default: ...]` appears at most once per option, and `lab ssh`
shows its ARGS."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from clusterforge.cli import app


def _paths(group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*prefix, name))
        if hasattr(command, "commands"):
            found += _paths(command, (*prefix, name))
    return found


ROOT = typer.main.get_command(app)
PATHS = _paths(ROOT)
RUNNER = CliRunner()


def _help(*path: str, width: int = 80) -> str:
    result = RUNNER.invoke(app, [*path, "--help"], terminal_width=width)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) for p in PATHS])
def test_help_has_an_example(path: tuple[str, ...]) -> None:
    text = _help(*path)
    assert "Example:" in text
    example = text.split("Example:", 1)[1]
    assert f"clusterforge {path[0]}" in example


@pytest.mark.parametrize("path", [(), *[p for p in PATHS if len(p) == 1]], ids=lambda p: " ".join(p) or "top")
def test_command_lists_are_not_truncated(path: tuple[str, ...]) -> None:
    text = _help(*path, width=80)
    if "Commands:" in text:
        listing = text.split("Commands:", 1)[1]
        assert "..." not in listing and "…" not in listing, listing


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) for p in PATHS])
def test_declarations_read_inventory_and_defaults_show_once(path: tuple[str, ...]) -> None:
    text = _help(*path, width=200)
    usage = text.splitlines()[0]
    assert not re.search(r"\{?(file|inventory)\}?", usage), usage
    for line in text.splitlines():
        assert line.count("[default:") <= 1, line


def test_lab_ssh_shows_its_args() -> None:
    assert "[ARGS]..." in _help("lab", "ssh").splitlines()[0]


def test_image_default_is_spelled_out() -> None:
    from clusterforge.export.containerlab import DEFAULT_IMAGES

    text = " ".join(_help("export", "containerlab", width=400).split())
    assert "see DEFAULT_IMAGES" not in text
    spelled = "[default: " + ", ".join(f"{k}={v}" for k, v in DEFAULT_IMAGES.items()) + "]"
    assert spelled in text
