"""`clusterforge drift`: what differs between the declaration, the stack's state and the machines now.

Exit codes as in cli.py: 0 nothing drifted, 1 drift (or undeployed changes) found, 3 environment.
"""

from __future__ import annotations

import re
from pathlib import Path

import typer

from clusterforge.cli._common import err, load, out
from clusterforge.cli._common import say as _say

__all__ = ["register"]

DRIFT_LINE = re.compile(r"drift: (.*)$")


def drift_lines(engine_output: str) -> list[str]:
    """The providers' `drift: ...` lines in an engine run's output, once each, in order."""
    seen: dict[str, None] = {}
    for line in engine_output.splitlines():
        match = DRIFT_LINE.search(line)
        if match:
            seen.setdefault(match.group(1).strip(), None)
    return list(seen)


def drift(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="stack name [default: the inventory's stem]"),
    state_dir: Path | None = typer.Option(None, "--state-dir", envvar="CLUSTERFORGE_STATE_DIR",
                                          help="state dir [env CLUSTERFORGE_STATE_DIR; default .state]"),
    backend_url: str | None = typer.Option(None, "--backend-url", envvar="CLUSTERFORGE_BACKEND_URL",
                                           help="Pulumi backend URL [env CLUSTERFORGE_BACKEND_URL]"),
) -> None:
    """Report switch-config and host drift (and undeployed changes) without changing anything; exit 1 on drift."""
    from pulumi.automation import CommandError

    from clusterforge.pulumi import automation

    load(inventory)  # declaration errors as FILE:LINE first
    name = stack or inventory.stem
    backend = automation.Backend.resolve(state_dir, backend_url)
    try:
        handle = automation.open_stack(name, None, backend)  # the stack's own settings: nothing is changed
    except automation.EngineMissing as exc:
        _say(err, f"error: {exc}")
        raise typer.Exit(3) from None
    lines: list[str] = []
    try:
        result = automation.preview(handle, on_output=lines.append)
    except CommandError as exc:
        _say(err, (getattr(exc, "stderr", "") or str(exc)).strip()[-4000:] or "error: the preview failed")
        raise typer.Exit(1) from None
    found = drift_lines("\n".join(lines) + "\n" + (result.stdout or ""))
    summary = result.summary
    for line in found:
        _say(out, f"DRIFT {line}")
    pending = {op: sorted(s.name for s in steps) for op, steps in summary.by_op().items() if op != "same"}
    for op, names in sorted(pending.items()):
        _say(out, f"{op}: {', '.join(names)}")
    if found or pending:
        _say(out, f"stack {name}: {len(found)} drift finding(s), {summary.changes} resource(s) would change;"
                  " `clusterforge up` repairs it")
        raise typer.Exit(1)
    _say(out, f"stack {name}: no drift ({summary.count('same')} resources as deployed)")


def register(app: typer.Typer) -> None:
    app.command("drift")(drift)
