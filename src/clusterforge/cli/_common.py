"""What every command shares: the consoles, the one declaration loader, the exit-code rules.

Exit codes: 0 ok, 1 the declaration (or the cluster) is wrong, 2 usage error, 3 environment problem.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from rich.console import Console

from clusterforge.cli._console import emit_json, stderr_console, stdout_console
from clusterforge.gcpause import paused_gc

if TYPE_CHECKING:  # the model and planner are imported by the commands that load a declaration (load)
    from clusterforge.model import ClusterSpec, SourceMap
    from clusterforge.plan import Plan

__all__ = ["out", "err", "say", "print_problems", "load", "usage_error", "Format", "format_option", "emit_json",
           "ApplyTarget", "collector_paused"]

F = TypeVar("F", bound=Callable[..., Any])


class Format(str, Enum):
    """What a reporting command writes on stdout: the human table/lines, or one JSON document."""

    table = "table"
    json = "json"


def format_option() -> Any:
    return typer.Option(Format.table, "--format", "-f", help="table (for people) or json (one document on stdout)")


class HostTarget(str, Enum):
    """How a host command reaches hosts: the names of clusterforge.targets.REACHES it offers."""

    lab = "lab"
    ssh = "ssh"


class ApplyTarget(str, Enum):
    """Where `preview`/`up` deliver: the names of clusterforge.targets.TARGETS."""

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


def collector_paused(command: F) -> F:
    """A command that loads a declaration and writes the Plan out (plan, render, report, export), run with the
    cyclic garbage collector paused (clusterforge.gcpause): loading pauses it, but what the command does with
    the Plan next (an export's dicts, the report's views, the writer) allocates enough for the collector to walk
    the millions of planned objects again and again, ~4 s of CPU at 512 SUs for `export containerlab`. The Plan
    and the command's own objects form no cycles; the few made meanwhile are collected when the pause ends.
    typer reads the command's parameters through ``__wrapped__``."""

    @functools.wraps(command)
    def paused(*args: Any, **kwargs: Any) -> Any:
        with paused_gc():
            return command(*args, **kwargs)

    return paused  # type: ignore[return-value]


def usage_error(message: str) -> NoReturn:
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
        outcome = {"passed": "ok", "failed": "FAIL", "simulated": "SIMULATED"}[c.outcome]
        detail = f"{c.detail}; simulated: {c.simulated}" if c.simulated else c.detail
        table.add_row(c.name, outcome, detail, style={"FAIL": "red", "SIMULATED": "cyan"}.get(outcome))
    out.print(table)
