"""`clusterforge preview | up | destroy`: the Pulumi stack of one declaration, through the Automation API.

The stack (default: the inventory's file stem) lives in its own work dir under the state dir with a
passphrase secrets provider and, unless --backend-url names a shared one (postgres://), a local file
backend (see clusterforge.pulumi.automation and docs/state.md). `up` and `destroy` hold the stack's lock
for the whole run (clusterforge.pulumi.stacklock). Exit codes as in cli/_common.py: 1 the declaration or
the apply failed, or another run holds the stack; 2 a bad option; 3 the environment (no engine, no
passphrase for a shared backend, the state database unreachable).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from clusterforge.cli._common import ApplyTarget, Format, emit_json, err, format_option, out, usage_error
from clusterforge.cli._engine_out import (
    CHECKPOINTS_HELP,
    apply_up,
    checkpoints_mode,
    print_summary,
    run_engine,
    saving_run,
)
from clusterforge.cli._parts import lock_wait_option, part_option
from clusterforge.cli._revision import REVISION, REVISION_HELP, superseded
from clusterforge.cli._stack import (
    backend_url_option,
    locked,
    open_stack,
    passphrase_option,
    prepare,
    state_dir_option,
)

__all__ = ["register"]


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
    state_dir: Path | None = state_dir_option(),
    backend_url: str | None = backend_url_option(),
    passphrase_file: Path | None = passphrase_option(),
    part: str | None = part_option(),
) -> None:
    """Preview what `up` would change: counts per resource type and operation, plus names.

    --format json: {create, update, replace, delete: [urn], same: N} for CI."""
    from clusterforge.pulumi import automation

    as_json = as_json or format is Format.json
    handle, name, _ = open_stack(inventory, stack, target, provision, verify, state_dir, backend_url, passphrase_file,
                                 part)
    echo = (lambda line: err.out(line, highlight=False)) if diff and as_json else (
        (lambda line: out.out(line, highlight=False)) if diff else None)
    result = run_engine(automation.preview, handle, diff=diff, on_output=echo)
    if as_json:
        sys.stdout.write(json.dumps(result.summary.to_json(), indent=1) + "\n")
    else:
        print_summary(f"preview of stack {name}", result.summary)
    if expect_no_changes and result.summary.changes:
        raise typer.Exit(1)


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
    state_dir: Path | None = state_dir_option(),
    backend_url: str | None = backend_url_option(),
    passphrase_file: Path | None = passphrase_option(),
    part: str | None = part_option(),
    lock_wait: float = lock_wait_option(),
    revision: str | None = typer.Option(None, "--revision", envvar="CLUSTERFORGE_REVISION", metavar="REV",
                                        help=REVISION_HELP),
) -> None:
    """Apply the declaration: deliver switch configs, (lab) build hosts, provision, verify.

    Holds the stack's lock throughout: a second `up` or `destroy` of the stack is refused, naming this run
    (or, with --lock-wait, waits for it, queued, as a CI apply after a merge does)."""
    requested = checkpoints_mode("end" if skip_checkpoints else checkpoints)
    if revision is not None and not REVISION.fullmatch(revision):
        usage_error(f"--revision {revision[:60]!r}: not a revision (a commit id or ref name: letters, digits, . _ / -)")
    handle, name, backend = open_stack(inventory, stack, target, provision, verify, state_dir, backend_url,
                                       passphrase_file, part, revision)
    # the preview and the question included: what is asked is applied
    with locked(handle, backend, name, "up", lock_wait):
        if revision is not None and superseded(handle, name, revision, format is Format.json):
            return
        apply_up(handle, name, yes, requested, format is Format.json)


def destroy_cmd(
    inventory: Path | None = typer.Argument(None, help="inventory YAML (names the default stack)"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="stack name [default: the inventory's stem]"),
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask"),
    checkpoints: str = typer.Option("auto", "--checkpoints", metavar="auto|step|end", help=CHECKPOINTS_HELP),
    format: Format = format_option(),
    state_dir: Path | None = state_dir_option(),
    backend_url: str | None = backend_url_option(),
    passphrase_file: Path | None = passphrase_option(),
    part: str | None = part_option(),
) -> None:
    """Delete every resource of the stack: remove delivered configs, take the lab down."""
    from clusterforge.pulumi import automation

    requested = checkpoints_mode(checkpoints)
    name = stack or (inventory.stem if inventory is not None else None)
    handle, name, backend = open_stack(None, name, None, None, None, state_dir, backend_url, passphrase_file,
                                       part)
    if not yes and not typer.confirm(f"Destroy every resource of stack {name}?", default=False):
        raise typer.Exit(1)
    with locked(handle, backend, name, "destroy"):
        prepare(handle, name)
        result = saving_run(automation.destroy, handle, name, "destroy", requested,
                             automation.managed_config(handle))
    if format is Format.json:
        emit_json({"stack": name, "deleted": result.summary.count("delete")})
        return
    out.print(f"stack {name}: {result.summary.count('delete')} resources deleted", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("preview")(preview_cmd)
    app.command("up")(up_cmd)
    app.command("destroy")(destroy_cmd)
