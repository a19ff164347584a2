"""`clusterforge unlock`: show what holds a stack and clear it, after a confirmation.

The workflow is clusterforge.pulumi.unlock; this module parses the options and asks. Exit codes: 0 cleared
(or nothing held the stack), 1 declined, or the holder still runs on this machine; 2 a bad option;
3 the environment (the state database unreachable, no passphrase for a shared backend).
"""

from __future__ import annotations

from pathlib import Path

import typer

from clusterforge.cli._args import check_stack
from clusterforge.cli._common import Format, emit_json, err, format_option, out, say
from clusterforge.cli._stack import BACKEND_HELP, STATE_DIR_HELP, passphrase_option

__all__ = ["register"]


def unlock_cmd(
    inventory: Path | None = typer.Argument(None, help="inventory YAML (names the default stack)"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="stack name [default: the inventory's stem]"),
    yes: bool = typer.Option(False, "--yes", "-y", help="clear without asking"),
    format: Format = format_option(),
    state_dir: Path | None = typer.Option(None, "--state-dir", envvar="CLUSTERFORGE_STATE_DIR", help=STATE_DIR_HELP),
    backend_url: str | None = typer.Option(None, "--backend-url", envvar="CLUSTERFORGE_BACKEND_URL",
                                           help=BACKEND_HELP),
    passphrase_file: Path | None = passphrase_option(),
) -> None:
    """Clear a stack's lock left by a run that is gone (a lost machine, a crashed `pulumi`), after asking.

    Shows who holds the stack, since when and from where; a holder whose process still runs on this
    machine is refused (stop it instead)."""
    from clusterforge.pulumi import automation, unlock
    from clusterforge.pulumi._pg import PsqlError
    from clusterforge.pulumi.backend_url import BackendUrlError

    name = stack or (inventory.stem if inventory is not None else None)
    if name is None:
        say(err, "error: give an INVENTORY or --stack")
        raise typer.Exit(2)
    check_stack(name)
    try:
        backend = automation.Backend.resolve(state_dir, backend_url, passphrase_file)
        locks = unlock.inspect(backend, name)
    except BackendUrlError as exc:
        say(err, f"error: --backend-url: {exc}")
        raise typer.Exit(2) from None
    except PsqlError as exc:
        say(err, f"error: {exc}")
        raise typer.Exit(3) from None
    as_json = format is Format.json
    if not locks.locked:
        if as_json:
            emit_json({"stack": name, "locked": False, "cleared": []})
        else:
            say(out, f"stack {name} is not locked ({locks.where})")
        return
    for line in locks.lines():
        say(err, line)
    if locks.running_here:
        say(err, f"error: pid {locks.holder.pid if locks.holder else '?'} still runs on this machine: stop it"
                 " (its lock goes with it) rather than unlock")
        raise typer.Exit(1)
    if not yes and not typer.confirm(f"Clear the lock of stack {name}? The run that holds it must be gone, or two"
                                     " runs will change the stack at once", default=False, err=True):
        raise typer.Exit(1)
    try:
        done = unlock.clear(backend, locks)
    except (automation.EngineMissing, automation.SecretsMissing, PsqlError) as exc:
        say(err, f"error: {exc}")
        raise typer.Exit(3) from None
    if as_json:
        emit_json({"stack": name, "locked": True, "cleared": done})
        return
    for line in done:
        say(out, line)


def register(app: typer.Typer) -> None:
    app.command("unlock")(unlock_cmd)
