"""`up --revision`: the repository revision an apply comes from, recorded in the stack (its output `revision`), so
an older merge's apply that got the lock after a later one's leaves the stack as the later one made it."""

from __future__ import annotations

import re
from typing import Any

import typer

from clusterforge.cli._common import emit_json, out
from clusterforge.cli._stack import say_err

__all__ = ["REVISION", "REVISION_HELP", "superseded"]

REVISION = re.compile(r"[0-9A-Za-z_][0-9A-Za-z._/-]{0,199}")  # never an option to git, one line, bounded

REVISION_HELP = ("the repository revision applied, recorded in the stack: an `up` of a revision that the stack's"
                 " recorded one already holds (an older merge queued behind a later one) applies nothing")


def superseded(handle: Any, name: str, revision: str, as_json: bool) -> bool:
    """Under the lock: the stack was applied from a revision that holds ``revision`` (a later merge's apply ran
    first), so applying this one would take the cluster back. Said, and nothing applied. A recorded revision the
    repository does not know is refused (exit 1): it may be the later one."""
    from clusterforge.cli._gitside import includes

    recorded = handle.outputs().get("revision")
    applied = str(recorded.value) if recorded is not None and recorded.value else None
    if applied is None or applied == revision:
        return False
    held = includes(applied, revision)
    if held is None:  # most likely a later merge than this checkout has: applying would take the cluster back
        say_err(f"error: stack {name} was applied from {applied}, which this repository does not know: not applying"
                f" {revision} over it (fetch it, `git fetch origin`, and run again if {revision} is the later one)")
        raise typer.Exit(1)
    if not held:
        return False
    line = f"stack {name}: not applied: it is at {applied}, a later revision that holds {revision}"
    if as_json:
        say_err(line)
        emit_json({"stack": name, "skipped": {"revision": revision, "applied": applied}})
    else:
        out.print(line, markup=False, highlight=False)
    return True
