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
from clusterforge.cli._common import ApplyTarget, err, load, usage_error

__all__ = ["BACKEND_HELP", "PART_HELP", "PASSPHRASE_HELP", "STATE_DIR_HELP", "backend_url_option", "flag_value",
           "guarded", "lock_wait_option", "locked", "masked", "open_stack", "part_option", "part_stack",
           "passphrase_option", "prepare", "say_err", "state_dir_option"]

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


PART_HELP = ("the part to apply of a cluster whose declaration splits its state (state: {split: su}): site, suNN or"
             " services; its stack is <stack>-<part>, with its own lock [required there]")


LOCK_WAIT_HELP = ("seconds to wait, queued, while another run holds the stack's lock, saying so; then exit 1 naming"
                  " it [env CLUSTERFORGE_LOCK_WAIT_S; default 0: refused at once]")


def lock_wait_option() -> Any:
    return typer.Option(0.0, "--lock-wait", envvar="CLUSTERFORGE_LOCK_WAIT_S", min=0.0, max=86_400.0,
                        metavar="SECONDS", help=LOCK_WAIT_HELP)


def part_option() -> Any:
    return typer.Option(None, "--part", help=PART_HELP)


def part_stack(inventory: Path | None, base: str, part: str | None) -> tuple[str, str | None, tuple[str, ...]]:
    """The stack of ``part`` of the declaration's split (clusterforge.plan.stacks), the part (None for a cluster
    held whole) and the stacks whose outputs it reads. A part the declaration does not have, or a split
    declaration without --part, is a usage error naming the parts and their order; --part on an unsplit
    declaration points at where it would say so."""
    from clusterforge.plan.stacks import WHOLE, split_stacks
    from clusterforge.plan.stacks import part_stack as stack_of

    if inventory is None:  # destroy by stack name: the part names the stack
        return (stack_of(base, part), part, ()) if part is not None else (base, None, ())
    _, plan, source = load(inventory)
    split = split_stacks(plan)
    order = "; ".join(" ".join(p.name for p in wave) + (" (side by side)" if len(wave) > 1 else "")
                      for wave in split.waves())
    if split.mode == "none":
        if part is not None and part != WHOLE:
            where = source.problem(("state", "split"), "none: the cluster is one stack; declare `state: {split: su}`"
                                   " for a site stack, one per SU and services")
            usage_error(f"--part {part[:40]!r}: {where}")
        return base, None, ()
    names = ", ".join(split.names())
    if part is None:
        usage_error(str(source.problem(("state", "split"), f"{split.mode}: the cluster is split into stacks;"
                                       f" give --part, one of {names} (apply order: {order})")))
    if part not in split.names():
        usage_error(f"--part {part[:40]!r}: not a part of {inventory}: {names} (apply order: {order})")
    return stack_of(base, part), part, tuple(stack_of(base, name) for name in split.part(part).reads)


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
        _require_applied(handle, backend, stack, reads)
    return handle, stack, backend


def _require_applied(handle: Any, backend: Any, stack: str, reads: tuple[str, ...]) -> None:
    """A part reads the outputs of the stacks before it (its program's stack references): one that is not in the
    backend yet is said here, with the command that applies it, before the engine starts."""
    have = {summary.name for summary in handle.workspace.list_stacks()}
    missing = [name for name in reads if name not in have]
    if missing:
        parts = " ".join(name.rsplit("-", 1)[-1] for name in missing)
        say_err(f"error: stack {stack} reads the outputs of {', '.join(missing)}, not in {backend.display_url}"
                f" yet: apply it first (clusterforge up INVENTORY --part {parts})")
        raise typer.Exit(1)


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


