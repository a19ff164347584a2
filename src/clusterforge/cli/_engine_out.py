"""What the engine says during a `preview`, `up` or `destroy`: its progress streamed to stderr (tracebacks folded,
the backend URL masked), its failure as exit 1, the run's summary and the state saved as --checkpoints chooses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from clusterforge.cli._common import emit_json, err, out
from clusterforge.cli._stack import guarded, masked, prepare, say_err

__all__ = ["CHECKPOINTS_HELP", "OPS", "apply_up", "automation_config_value", "checkpoints_mode", "flag_set",
           "print_summary", "print_verify", "run_engine", "saving_run"]

OPS = ("create", "update", "replace", "delete", "same")
CHECKPOINTS_HELP = ("when the state is saved: after every step, or once as the run closes (also on Ctrl-C or an "
                    "error); auto: once for a stack of switch configs that does not provision, else every step")


def print_summary(title: str, summary: Any) -> None:
    from rich.table import Table

    counts = {op: summary.count(op) for op in OPS}
    out.print(f"{title}: {counts['create']} to create, {counts['update']} to update, {counts['replace']} to replace,"
              f" {counts['delete']} to delete, {counts['same']} unchanged", markup=False, highlight=False)
    table = Table("resource type", *OPS, box=None)
    for rtype, per_op in summary.per_type().items():
        table.add_row(rtype, *(str(per_op.get(op, "")) for op in OPS))
    out.print(table)
    for op in OPS[:-1]:
        steps = summary.by_op().get(op, [])
        if steps:
            names = ", ".join(sorted(step.name for step in steps))
            out.print(f"{op}: {names}", markup=False, highlight=False, soft_wrap=True)


_FOLDER: Any = None  # a provider's Python traceback in the engine's output becomes its one sentence


def _stream(line: str) -> None:
    """Engine progress, line by line, on stderr (stdout stays the summary)."""
    global _FOLDER
    if _FOLDER is None:
        from clusterforge.ops.engine_text import TracebackFolder

        _FOLDER = TracebackFolder()
    for shown in _FOLDER.feed(masked(line)):
        err.out(shown, highlight=False)


def _engine_failed(exc: Exception, streamed: bool) -> None:
    # Streamed runs already showed the engine's output and diagnostics; repeat only its stderr.
    text = (getattr(exc, "stderr", "") or "").strip()
    if not text and not streamed:
        text = (getattr(exc, "stdout", "") or str(exc)).strip()
    from clusterforge.ops.engine_text import fold_tracebacks

    text = masked("\n".join(fold_tracebacks(text.splitlines())))
    err.print(text[-6000:] or "error: the engine run failed (diagnostics above)", markup=False, highlight=False)
    raise typer.Exit(1)


def run_engine(action: Any, *args: Any, **kwargs: Any) -> Any:
    from pulumi.automation import CommandError

    try:
        return action(*args, **kwargs)
    except CommandError as exc:
        _engine_failed(exc, streamed=kwargs.get("on_output") is not None)


def automation_config_value(value: str) -> Any:
    from pulumi.automation import ConfigValue

    return ConfigValue(value=value)


def print_verify(handle: Any, started: Any) -> None:
    from clusterforge.ops.verify_summary import verify_lines

    pinned = handle.get_all_config().get("clusterforge:workDir")
    work_dir = Path(pinned.value) if pinned else Path(handle.workspace.work_dir)  # the program's default
    for line in verify_lines(work_dir, started):
        out.print(line, markup=False, highlight=False, soft_wrap=True)


# An interrupted run that saves its state once waits this long for the engine to cancel and save.
ENGINE_CLOSE_S = 60.0


def checkpoints_mode(requested: str) -> str:
    """--checkpoints, refused before the engine starts when it is not one of the modes."""
    from clusterforge.pulumi.checkpoints import MODES

    if requested not in MODES:
        say_err(f"error: --checkpoints {requested!r}: expected one of {', '.join(MODES)}")
        raise typer.Exit(2)
    return requested


def flag_set(config: dict[str, str], key: str) -> bool:
    from clusterforge.pulumi.checkpoints import flag

    return flag(config, key, True)


def saving_run(run: Any, handle: Any, name: str, verb: str, requested: str, config: dict[str, str]) -> Any:
    """``run`` (automation.up or destroy) with the state saved as --checkpoints chooses, said on stderr."""
    from clusterforge.pulumi import checkpoints

    saving = checkpoints.choose(requested, config)
    say_err(saving.line)
    return guarded(lambda summary: run_engine(run, handle, on_output=_stream, summary=summary, checkpoints=saving.mode),
                   handle, name, verb, engine_closes=ENGINE_CLOSE_S if saving.mode == "end" else 0.0)


def apply_up(handle: Any, name: str, yes: bool, requested: str, as_json: bool) -> None:
    """`up` under the stack's lock: the preview and the question (unless ``yes``), the run, what it did."""
    import datetime as _dt

    from clusterforge.pulumi import automation

    prepare(handle, name)
    started = _dt.datetime.now(_dt.UTC)
    config = automation.managed_config(handle)
    if flag_set(config, "verify"):
        # A new run id: Verification checks the hosts as they are now on every `up` (previews leave it). Only
        # then: a changed setting is a change to the dynamic providers' configuration (an update each `up`).
        handle.set_config("clusterforge:verifyRun", automation_config_value(started.isoformat(timespec="seconds")))
    if not yes:
        planned = run_engine(automation.preview, handle)
        print_summary(f"preview of stack {name}", planned.summary)
        if not planned.summary.changes:
            out.print("nothing to change", markup=False)
            return
        if not typer.confirm("Apply these changes?", default=False):
            raise typer.Exit(1)
    result = saving_run(automation.up, handle, name, "up", requested, config)
    if as_json:
        emit_json({"stack": name, "summary": result.summary.to_json(), "outputs": result.outputs})
        return
    print_summary(f"stack {name} updated", result.summary)
    print_verify(handle, started)
    for key, value in sorted(result.outputs.items()):
        out.print(f"{key}: {json.dumps(value)}", markup=False, highlight=False, soft_wrap=True)
