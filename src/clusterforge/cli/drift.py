"""`clusterforge drift`: the declaration against the stack's state and the machines, nothing changed.

Exit codes as in cli/_common.py: 0 nothing drifted, 1 drift or undeployed changes, 2 usage, 3 environment.
"""

from __future__ import annotations

import re
from pathlib import Path

import typer

from clusterforge.cli._args import check_stack
from clusterforge.cli._common import Format, emit_json, err, format_option, load, out
from clusterforge.cli._common import say as _say

__all__ = ["drift_lines", "register"]

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
    format: Format = format_option(),
) -> None:
    """Report switch-config and host drift (and undeployed changes) without changing anything; exit 1 on drift."""
    from pulumi.automation import CommandError

    from clusterforge.pulumi import automation

    name = check_stack(stack) if stack else check_stack(inventory.stem, str(inventory))
    load(inventory)  # declaration errors as FILE:LINE first
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
    pending = {op: sorted(s.name for s in steps) for op, steps in summary.by_op().items() if op != "same"}
    if format is Format.json:
        emit_json({"stack": name, "drift": found, "pending": pending, "ok": not (found or pending)})
        raise typer.Exit(1 if found or pending else 0)
    for line in found:
        _say(out, f"DRIFT {line}")
    for op, names in sorted(pending.items()):
        _say(out, f"{op}: {', '.join(names)}")
    if found or pending:
        _say(out, f"stack {name}: {len(found)} drift finding(s), {summary.changes} resource(s) would change;"
                  " `clusterforge up` repairs it")
        raise typer.Exit(1)
    _say(out, f"stack {name}: no drift ({summary.count('same')} resources as deployed)")


def register(app: typer.Typer) -> None:
    app.command("drift")(drift)
