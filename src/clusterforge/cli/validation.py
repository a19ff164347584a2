"""`clusterforge validate`: the command's body, and the command line `clusterforge validate FILE` run without
the typer app.

``validate_declaration`` is what `clusterforge validate` does (cli/core calls it with the app's consoles).
``validate_main`` runs it for the one command line that needs no parsing beyond its words, ``validate FILE``
(clusterforge.cli.launch decides): importing typer and building the app is a third of that command's
start-up. It keeps the app's rules: the same lines through the same consoles (cli/_console.PlainLines),
exit 1 for a wrong declaration, 3 for an environment problem, 130 on Ctrl-C, and a closed stdout pipe
ending the command with status 1, as click does. test_validate_fast_path.py runs both ways on the same files.
"""

from __future__ import annotations

import errno
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path

from clusterforge.cli._console import PlainLines, emit_json
from clusterforge.gcpause import paused_gc

__all__ = ["validate_declaration", "validate_main", "fast_argv", "plain_words"]

Say = Callable[[str], None]


def validate_declaration(file: Path, as_json: bool, say_out: Say, say_err: Say) -> int:
    """Validate a declaration; 0, or 1 with FILE:LINE:COL: field: message lines on stderr."""
    with paused_gc():  # the model and planner modules build thousands of classes and functions, no garbage
        from clusterforge.loading import DeclarationError, load_and_plan

    try:
        _, plan_obj, _ = load_and_plan(file)
    except DeclarationError as exc:
        for problem in exc.problems:
            say_err(str(problem))
        return 1
    for warning in plan_obj.warnings:
        say_err(f"warning: {warning}")
    # load_and_plan has run the fabric checks (plan.fabric_checks) and refused the declaration on any problem
    if as_json:
        emit_json({"file": str(file), "ok": True, "summary": plan_obj.summary,
                   "warnings": list(plan_obj.warnings), "problems": []})
        return 0
    summary = plan_obj.summary
    say_out(f"{file}: ok — {summary.servers} servers, {summary.gpus} GPUs, {summary.racks} racks,"
            f" {summary.power_kw} kW")
    return 0


def fast_argv(argv: list[str]) -> str | None:
    """FILE when the command line is ``validate FILE`` as the app would read it, else None (the app runs).

    FILE must be a plain word: not empty, no option (``-...``), no lone surrogate (text the app's
    path parsing could refuse); no shell-completion request in the environment; not on Windows, where
    click expands wildcards in the arguments first.
    """
    if len(argv) != 2 or argv[0] != "validate" or not plain_words(argv[1:]):
        return None
    return argv[1]


def plain_words(words: list[str]) -> bool:
    """Every word is one the app would read as a plain argument: not empty, no option (``-...``), no lone
    surrogate; and no shell-completion request in the environment, not on Windows (cli/rendering too)."""
    if os.name == "nt":
        return False
    for word in words:
        if not word or word.startswith("-"):
            return False
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return not any(name.startswith("_") and name.endswith("_COMPLETE") and value
                   for name, value in os.environ.items())


def validate_main(file: str) -> None:
    """`clusterforge validate FILE`, with the app's exit codes (cli/app.run and click's standalone mode)."""
    lines = PlainLines()
    # The collector is off for the command, and what is alive at its end is frozen (gc.freeze) before the
    # collector's state is restored: the process exits next, and the collections at exit would walk every
    # class, function and planned object to find nothing to free (loading and planning make no reference
    # cycles: clusterforge.gcpause). A caller in the same process keeps those objects for good, as it
    # keeps the modules. Files are closed where they are used; stdout and stderr are flushed after each
    # line and at exit as before.
    run_plain(lambda: validate_declaration(Path(file), False, lines.out, lines.err), lines)


def run_plain(command: Callable[[], int], lines: PlainLines) -> None:
    """Run a command of the fast paths (validate, cli/rendering's render) with the app's exit codes: the collector
    off and what is alive at the end frozen (above), 130 on an interrupt, 1 on a closed pipe, 3 on another OS
    error, the command's status otherwise."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        status = command()
        gc.freeze()
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as exc:
        if exc.errno == errno.EPIPE:  # the reader went away: exit 1 without a traceback, as click does
            # Python's documented way (signal module, "Note on SIGPIPE"): the flush at exit goes to /dev/null
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        lines.err(f"error: {exc}")
        sys.exit(3)
    finally:
        if enabled:
            gc.enable()
    if status:
        sys.exit(status)
