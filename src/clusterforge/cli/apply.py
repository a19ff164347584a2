"""`clusterforge preview | up | destroy`: the Pulumi stack of one declaration, through the Automation API.

The stack (default: the inventory's file stem) lives in its own work dir under the state dir with a
passphrase secrets provider and, unless --backend-url names a shared one (postgres://), a local file
backend (see clusterforge.pulumi.automation and docs/state.md). `up` and `destroy` hold the stack's lock
for the whole run (clusterforge.pulumi.stacklock). Exit codes as in cli/_common.py: 1 the declaration or
the apply failed, or another run holds the stack; 2 a bad option; 3 the environment (no engine, no
passphrase for a shared backend, the state database unreachable).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from clusterforge import paths
from clusterforge.cli._args import check_stack
from clusterforge.cli._common import ApplyTarget, Format, emit_json, err, format_option, load, out

__all__ = ["register"]

OPS = ("create", "update", "replace", "delete", "same")
STATE_DIR_HELP = "state dir: backend, passphrase, per-stack work dirs [env CLUSTERFORGE_STATE_DIR; default .state]"
BACKEND_HELP = ("Pulumi backend URL: file://DIR or postgres://USER@HOST:PORT/DB (password: PGPASSWORD)"
                " [env CLUSTERFORGE_BACKEND_URL; default file://<state dir>/pulumi]")
PASSPHRASE_HELP = ("file holding the secrets passphrase the team shares [env CLUSTERFORGE_PASSPHRASE_FILE;"
                   " default $PULUMI_CONFIG_PASSPHRASE, else (file backend) <state dir>/passphrase]")


def passphrase_option() -> Any:
    return typer.Option(None, "--passphrase-file", envvar="CLUSTERFORGE_PASSPHRASE_FILE", help=PASSPHRASE_HELP)


_MASKED_URL: str | None = None  # the backend URL of this run: its password is masked in anything printed


def _flag(value: bool | None) -> str | None:
    return None if value is None else ("true" if value else "false")


def _open(inventory: Path | None, stack: str | None, target: ApplyTarget | str | None, provision: bool | None,
          verify: bool | None, state_dir: Path | None, backend_url: str | None,
          passphrase_file: Path | None = None) -> tuple[Any, str, Any]:
    """(handle, stack name, automation.Backend) of the stack, its managed settings applied."""
    global _MASKED_URL
    from clusterforge.pulumi import automation
    from clusterforge.pulumi.backend_url import BackendUrlError

    if stack is None:
        if inventory is None:
            err.print("error: give an INVENTORY or --stack", markup=False)
            raise typer.Exit(2)
        check_stack(inventory.stem, str(inventory))
        stack = inventory.stem
    check_stack(stack)
    settings: dict[str, str | None] | None = None  # None: destroy leaves the stack's config alone
    if inventory is not None:
        load(inventory)  # declaration errors as FILE:LINE before the engine starts
        settings = {"inventory": paths.relative_to_workspace(inventory),
                    "target": target.value if isinstance(target, ApplyTarget) else target,
                    "provision": _flag(provision), "verify": _flag(verify)}
    try:
        backend = automation.Backend.resolve(state_dir, backend_url, passphrase_file)
    except BackendUrlError as exc:
        _say_err(f"error: --backend-url: {exc}")
        raise typer.Exit(2) from None
    _MASKED_URL = backend.url
    try:
        handle = automation.open_stack(stack, settings, backend)
    except (automation.EngineMissing, automation.SecretsMissing) as exc:
        _say_err(f"error: {exc}")
        raise typer.Exit(3) from None
    except Exception as exc:
        from pulumi.automation import CommandError

        if not isinstance(exc, CommandError):
            raise
        _say_err(f"error: stack {stack} on {backend.display_url}: {_masked(str(exc)).strip()[-3000:]}")
        raise typer.Exit(3) from None
    return handle, stack, backend


def _masked(text: str) -> str:
    from clusterforge.pulumi.backend_url import mask

    return mask(text, _MASKED_URL)


def _print_summary(title: str, summary: Any) -> None:
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
    for shown in _FOLDER.feed(_masked(line)):
        err.out(shown, highlight=False)


def _engine_failed(exc: Exception, streamed: bool) -> None:
    # Streamed runs already showed the engine's output and diagnostics; repeat only its stderr.
    text = (getattr(exc, "stderr", "") or "").strip()
    if not text and not streamed:
        text = (getattr(exc, "stdout", "") or str(exc)).strip()
    from clusterforge.ops.engine_text import fold_tracebacks

    text = _masked("\n".join(fold_tracebacks(text.splitlines())))
    err.print(text[-6000:] or "error: the engine run failed (diagnostics above)", markup=False, highlight=False)
    raise typer.Exit(1)


def _run(action: Any, *args: Any, **kwargs: Any) -> Any:
    from pulumi.automation import CommandError

    try:
        return action(*args, **kwargs)
    except CommandError as exc:
        _engine_failed(exc, streamed=kwargs.get("on_output") is not None)


def automation_config_value(value: str) -> Any:
    from pulumi.automation import ConfigValue

    return ConfigValue(value=value)


def _print_verify(handle: Any, started: Any) -> None:
    from clusterforge.ops.verify_summary import verify_lines

    pinned = handle.get_all_config().get("clusterforge:workDir")
    work_dir = Path(pinned.value) if pinned else Path(handle.workspace.work_dir)  # the program's default
    for line in verify_lines(work_dir, started):
        out.print(line, markup=False, highlight=False, soft_wrap=True)


def _say_err(line: str) -> None:
    err.print(line, markup=False, highlight=False, soft_wrap=True)


def _prepare(handle: Any, stack: str) -> None:
    """Another engine holds the stack: exit 1 saying so; an interrupted one: release and clear what it left.
    Runs under the stack's lock (_locked)."""
    from clusterforge.cli.engine_run import StackBusy, prepare

    try:
        prepare(handle, stack, _say_err, owned=True)
    except StackBusy as exc:
        _say_err(f"error: {exc}")
        raise typer.Exit(1) from None


@contextlib.contextmanager
def _locked(handle: Any, backend: Any, stack: str, verb: str) -> Iterator[None]:
    """The stack's lock for the block: exit 1 naming its holder when another run has it."""
    from clusterforge.cli.engine_run import StackLocked, locked
    from clusterforge.pulumi._pg import PsqlError

    try:
        with locked(handle, backend.url, stack, verb, _say_err):
            yield
    except StackLocked as exc:
        _say_err(f"error: {exc}")
        raise typer.Exit(1) from None
    except ValueError as exc:  # the lease setting
        _say_err(f"error: {exc}")
        raise typer.Exit(2) from None
    except PsqlError as exc:
        _say_err(f"error: the stack lock: {exc}")
        raise typer.Exit(3) from None


def _guarded(action: Any, handle: Any, stack: str, verb: str, engine_closes: float = 0.0) -> Any:
    from clusterforge.cli.engine_run import Interrupted, guarded

    try:
        return guarded(action, handle, stack, verb, _say_err, engine_closes, owned=True)
    except Interrupted as exc:
        raise typer.Exit(exc.exit_code) from None


def preview_cmd(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="stack name [default: the inventory's stem]"),
    target: ApplyTarget | None = typer.Option(None, "--target", help="where to deliver [default: the stack's]"),
    provision: bool | None = typer.Option(None, "--provision/--no-provision", help="declare HostProvision per SU"),
    verify: bool | None = typer.Option(None, "--verify/--no-verify", help="declare Verification per SU"),
    as_json: bool = typer.Option(False, "--json", help="same as --format json"),
    format: Format = format_option(),
    diff: bool = typer.Option(False, "--diff", help="show property-level diffs from the engine"),
    expect_no_changes: bool = typer.Option(False, "--expect-no-changes", help="exit 1 when anything would change"),
    state_dir: Path | None = typer.Option(None, "--state-dir", envvar="CLUSTERFORGE_STATE_DIR", help=STATE_DIR_HELP),
    backend_url: str | None = typer.Option(None, "--backend-url", envvar="CLUSTERFORGE_BACKEND_URL",
                                           help=BACKEND_HELP),
    passphrase_file: Path | None = passphrase_option(),
) -> None:
    """Preview what `up` would change: counts per resource type and operation, plus names.

    --format json: {create, update, replace, delete: [urn], same: N} for CI."""
    from clusterforge.pulumi import automation

    as_json = as_json or format is Format.json
    handle, name, _ = _open(inventory, stack, target, provision, verify, state_dir, backend_url, passphrase_file)
    echo = (lambda line: err.out(line, highlight=False)) if diff and as_json else (
        (lambda line: out.out(line, highlight=False)) if diff else None)
    result = _run(automation.preview, handle, diff=diff, on_output=echo)
    if as_json:
        sys.stdout.write(json.dumps(result.summary.to_json(), indent=1) + "\n")
    else:
        _print_summary(f"preview of stack {name}", result.summary)
    if expect_no_changes and result.summary.changes:
        raise typer.Exit(1)


CHECKPOINTS_HELP = ("when the state is saved: after every step, or once as the run closes (also on Ctrl-C or an "
                    "error); auto: once for a stack of switch configs that does not provision, else every step")


def up_cmd(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="stack name [default: the inventory's stem]"),
    target: ApplyTarget | None = typer.Option(None, "--target", help="where to deliver [default: the stack's]"),
    provision: bool | None = typer.Option(None, "--provision/--no-provision", help="run Ansible per SU"),
    verify: bool | None = typer.Option(None, "--verify/--no-verify", help="run the host checks per SU"),
    yes: bool = typer.Option(False, "--yes", "-y", help="apply without showing the preview and asking"),
    checkpoints: str = typer.Option("auto", "--checkpoints", metavar="auto|step|end", help=CHECKPOINTS_HELP),
    skip_checkpoints: bool = typer.Option(False, "--skip-checkpoints", hidden=True, help="--checkpoints end"),
    format: Format = format_option(),
    state_dir: Path | None = typer.Option(None, "--state-dir", envvar="CLUSTERFORGE_STATE_DIR", help=STATE_DIR_HELP),
    backend_url: str | None = typer.Option(None, "--backend-url", envvar="CLUSTERFORGE_BACKEND_URL",
                                           help=BACKEND_HELP),
    passphrase_file: Path | None = passphrase_option(),
) -> None:
    """Apply the declaration: deliver switch configs, (lab) build hosts, provision, verify.

    Holds the stack's lock throughout: a second `up` or `destroy` of the stack is refused, naming this run."""
    requested = _checkpoints_mode("end" if skip_checkpoints else checkpoints)
    handle, name, backend = _open(inventory, stack, target, provision, verify, state_dir, backend_url, passphrase_file)
    with _locked(handle, backend, name, "up"):  # the preview and the question included: what is asked is applied
        _up(handle, name, yes, requested, format)


def _up(handle: Any, name: str, yes: bool, requested: str, format: Format) -> None:
    import datetime as _dt

    from clusterforge.pulumi import automation

    _prepare(handle, name)
    started = _dt.datetime.now(_dt.UTC)
    config = automation.managed_config(handle)
    if _flag_set(config, "verify"):
        # A new run id: Verification checks the hosts as they are now on every `up` (previews leave it). Only
        # then: a changed setting is a change to the dynamic providers' configuration (an update each `up`).
        handle.set_config("clusterforge:verifyRun", automation_config_value(started.isoformat(timespec="seconds")))
    if not yes:
        planned = _run(automation.preview, handle)
        _print_summary(f"preview of stack {name}", planned.summary)
        if not planned.summary.changes:
            out.print("nothing to change", markup=False)
            return
        if not typer.confirm("Apply these changes?", default=False):
            raise typer.Exit(1)
    result = _saving_run(automation.up, handle, name, "up", requested, config)
    if format is Format.json:
        emit_json({"stack": name, "summary": result.summary.to_json(), "outputs": result.outputs})
        return
    _print_summary(f"stack {name} updated", result.summary)
    _print_verify(handle, started)
    for key, value in sorted(result.outputs.items()):
        out.print(f"{key}: {json.dumps(value)}", markup=False, highlight=False, soft_wrap=True)


# An interrupted run that saves its state once waits this long for the engine to cancel and save.
ENGINE_CLOSE_S = 60.0


def _checkpoints_mode(requested: str) -> str:
    """--checkpoints, refused before the engine starts when it is not one of the modes."""
    from clusterforge.pulumi.checkpoints import MODES

    if requested not in MODES:
        _say_err(f"error: --checkpoints {requested!r}: expected one of {', '.join(MODES)}")
        raise typer.Exit(2)
    return requested


def _flag_set(config: dict[str, str], key: str) -> bool:
    from clusterforge.pulumi.checkpoints import flag

    return flag(config, key, True)


def _saving_run(run: Any, handle: Any, name: str, verb: str, requested: str, config: dict[str, str]) -> Any:
    """``run`` (automation.up or destroy) with the state saved as --checkpoints chooses, said on stderr."""
    from clusterforge.pulumi import checkpoints

    saving = checkpoints.choose(requested, config)
    _say_err(saving.line)
    return _guarded(lambda summary: _run(run, handle, on_output=_stream, summary=summary, checkpoints=saving.mode),
                    handle, name, verb, engine_closes=ENGINE_CLOSE_S if saving.mode == "end" else 0.0)


def destroy_cmd(
    inventory: Path | None = typer.Argument(None, help="inventory YAML (names the default stack)"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="stack name [default: the inventory's stem]"),
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask"),
    checkpoints: str = typer.Option("auto", "--checkpoints", metavar="auto|step|end", help=CHECKPOINTS_HELP),
    format: Format = format_option(),
    state_dir: Path | None = typer.Option(None, "--state-dir", envvar="CLUSTERFORGE_STATE_DIR", help=STATE_DIR_HELP),
    backend_url: str | None = typer.Option(None, "--backend-url", envvar="CLUSTERFORGE_BACKEND_URL",
                                           help=BACKEND_HELP),
    passphrase_file: Path | None = passphrase_option(),
) -> None:
    """Delete every resource of the stack: remove delivered configs, take the lab down."""
    from clusterforge.pulumi import automation

    requested = _checkpoints_mode(checkpoints)
    name = stack or (inventory.stem if inventory is not None else None)
    handle, name, backend = _open(None, name, None, None, None, state_dir, backend_url, passphrase_file)
    if not yes and not typer.confirm(f"Destroy every resource of stack {name}?", default=False):
        raise typer.Exit(1)
    with _locked(handle, backend, name, "destroy"):
        _prepare(handle, name)
        result = _saving_run(automation.destroy, handle, name, "destroy", requested,
                             automation.managed_config(handle))
    if format is Format.json:
        emit_json({"stack": name, "deleted": result.summary.count("delete")})
        return
    out.print(f"stack {name}: {result.summary.count('delete')} resources deleted", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("preview")(preview_cmd)
    app.command("up")(up_cmd)
    app.command("destroy")(destroy_cmd)
