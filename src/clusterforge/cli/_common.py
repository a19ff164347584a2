"""What every command shares: the consoles, the one declaration loader, the exit-code rules.

Exit codes: 0 ok, 1 the declaration (or the cluster) is wrong, 2 usage error, 3 environment problem.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from clusterforge.cli._console import emit_json, stderr_console, stdout_console

if TYPE_CHECKING:  # the model and planner are imported by the commands that load a declaration (load)
    from clusterforge.model import ClusterSpec, SourceMap
    from clusterforge.plan import Plan

__all__ = ["out", "err", "say", "print_problems", "load", "usage_error", "Format", "format_option", "emit_json",
           "ApplyTarget"]


class Format(str, Enum):
    """What a reporting command writes on stdout: the human table/lines, or one JSON document."""

    table = "table"
    json = "json"


def format_option() -> Any:
    return typer.Option(Format.table, "--format", "-f", help="table (for people) or json (one document on stdout)")


class ApplyTarget(str, Enum):
    """Where `preview`/`up` deliver (clusterforge.pulumi.settings.TARGETS)."""

    lab = "lab"
    files = "files"
    ssh = "ssh"

out = stdout_console()  # pipes: full rows, not wraps; no emoji (cli/_console)
err = stderr_console()


def say(console: Console, text: str) -> None:
    """One plain line: no Rich markup or highlighting, never wrapped."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def print_problems(problems: Iterable[object]) -> None:
    for problem in problems:
        say(err, str(problem))


def load(path: Path) -> tuple[ClusterSpec, Plan, SourceMap]:
    """Load and plan a declaration; on a bad one print FILE:LINE:COL: field: message lines and exit 1."""
    from clusterforge.loading import DeclarationError, load_and_plan

    try:
        return load_and_plan(path)
    except DeclarationError as exc:
        print_problems(exc.problems)
        raise typer.Exit(1) from None


def usage_error(message: str) -> None:
    say(err, f"error: {message}")
    raise typer.Exit(2)


def print_layer_checks(layer: str, title: str, checks: list | None, why: str) -> None:
    """One scheduler layer's checks (Kubernetes, Slurm) as a table, or the line saying why none ran."""
    if checks is None:
        say(err, f"{layer}: not checked: {why}")
        return
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in ("check", "outcome", "detail"):
        table.add_column(column)
    for c in checks:
        table.add_row(c.name, "ok" if c.ok else "FAIL", c.detail, style=None if c.ok else "red")
    out.print(table)
