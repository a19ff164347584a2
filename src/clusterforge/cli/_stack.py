"""The stack a `preview`, `up` or `destroy` works on: the options that name its state, opening it (its managed
settings applied), its lock, and the backend URL masked in anything printed. Exit codes as in cli/_common.py."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from clusterforge import paths
from clusterforge.cli._args import check_stack
from clusterforge.cli._common import ApplyTarget, err
from clusterforge.cli._parts import part_stack, require_applied

__all__ = ["BACKEND_HELP", "PASSPHRASE_HELP", "STATE_DIR_HELP", "backend_url_option", "flag_value", "guarded",
           "locked", "masked", "open_stack", "passphrase_option", "prepare", "say_err", "state_dir_option"]

STATE_DIR_HELP = "state dir: backend, passphrase, per-stack work dirs [env CLUSTERFORGE_STATE_DIR; default .state]"
BACKEND_HELP = ("Pulumi backend URL: file://DIR or postgres://USER@HOST:PORT/DB (password: PGPASSWORD)"
                " [env CLUSTERFORGE_BACKEND_URL; default file://<state dir>/pulumi]")
PASSPHRASE_HELP = ("file holding the secrets passphrase the team shares [env CLUSTERFORGE_PASSPHRASE_FILE;"
                   " default $PULUMI_CONFIG_PASSPHRASE, else (file backend) <state dir>/passphrase]")


def state_dir_option() -> Any:
    return typer.Option(None, "--state-dir", envvar="CLUSTERFORGE_STATE_DIR", help=STATE_DIR_HELP)


def backend_url_option() -> Any:
    return typer.Option(None, "--backend-url", envvar="CLUSTERFORGE_BACKEND_URL", help=BACKEND_HELP)


def passphrase_option() -> Any:
    return typer.Option(None, "--passphrase-file", envvar="CLUSTERFORGE_PASSPHRASE_FILE", help=PASSPHRASE_HELP)


_MASKED_URL: str | None = None  # the backend URL of this run: its password is masked in anything printed


def flag_value(value: bool | None) -> str | None:
    return None if value is None else ("true" if value else "false")


def open_stack(inventory: Path | None, stack: str | None, target: ApplyTarget | str | None, provision: bool | None,
          verify: bool | None, state_dir: Path | None, backend_url: str | None,
          passphrase_file: Path | None = None, part: str | None = None,
          revision: str | None = None) -> tuple[Any, str, Any]:
    """(handle, stack name, automation.Backend) of the stack, its managed settings applied. ``part``: of a
    declaration split into stacks, the one to open (its stack <stack>-<part>)."""
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
    # declaration errors as FILE:LINE before the engine starts
    stack, part, reads = part_stack(inventory, stack, part)
    check_stack(stack)
    settings: dict[str, str | None] | None = None  # None: destroy leaves the stack's config alone
    if inventory is not None:
        settings = {"inventory": paths.relative_to_workspace(inventory),
                    "target": target.value if isinstance(target, ApplyTarget) else target,
                    "provision": flag_value(provision), "verify": flag_value(verify), "part": part,
                    "revision": revision}
    try:
        backend = automation.Backend.resolve(state_dir, backend_url, passphrase_file)
    except BackendUrlError as exc:
        say_err(f"error: --backend-url: {exc}")
        raise typer.Exit(2) from None
    _MASKED_URL = backend.url
    try:
        handle = automation.open_stack(stack, settings, backend)
    except (automation.EngineMissing, automation.SecretsMissing) as exc:
        say_err(f"error: {exc}")
        raise typer.Exit(3) from None
    except Exception as exc:
        from pulumi.automation import CommandError

        if not isinstance(exc, CommandError):
            raise
        say_err(f"error: stack {stack} on {backend.display_url}: {masked(str(exc)).strip()[-3000:]}")
        raise typer.Exit(3) from None
    if reads:
        require_applied(handle, backend, stack, reads, say_err)
    return handle, stack, backend


def masked(text: str) -> str:
    from clusterforge.pulumi.backend_url import mask

    return mask(text, _MASKED_URL)


def say_err(line: str) -> None:
    err.print(line, markup=False, highlight=False, soft_wrap=True)


def prepare(handle: Any, stack: str) -> None:
    """Another engine holds the stack: exit 1 saying so; an interrupted one: release and clear what it left.
    Runs under the stack's lock (_locked)."""
    from clusterforge.cli import engine_run

    try:
        engine_run.prepare(handle, stack, say_err, owned=True)
    except engine_run.StackBusy as exc:
        say_err(f"error: {exc}")
        raise typer.Exit(1) from None


@contextlib.contextmanager
def locked(handle: Any, backend: Any, stack: str, verb: str, wait_s: float = 0.0) -> Iterator[None]:
    """The stack's lock for the block: exit 1 naming its holder when another run has it (still, after up to
    ``wait_s`` seconds of a queued wait)."""
    from clusterforge.cli import engine_run
    from clusterforge.pulumi._pg import PsqlError

    try:
        with engine_run.locked(handle, backend.url, stack, verb, say_err, wait_s):
            yield
    except engine_run.StackLocked as exc:
        say_err(f"error: {exc}")
        raise typer.Exit(1) from None
    except ValueError as exc:  # the lease setting
        say_err(f"error: {exc}")
        raise typer.Exit(2) from None
    except PsqlError as exc:
        say_err(f"error: the stack lock: {exc}")
        raise typer.Exit(3) from None


def guarded(action: Any, handle: Any, stack: str, verb: str, engine_closes: float = 0.0) -> Any:
    from clusterforge.cli import engine_run

    try:
        return engine_run.guarded(action, handle, stack, verb, say_err, engine_closes, owned=True)
    except engine_run.Interrupted as exc:
        raise typer.Exit(exc.exit_code) from None


