"""The stacks of a declaration split into parts (state: {split: su}, clusterforge.plan.stacks) on the command
line: `--part`, the stack it names, the stacks it reads (applied first), and `--lock-wait`, the queued wait for a
held stack lock (CI applies after merges)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from clusterforge.cli._common import load, usage_error

__all__ = ["LOCK_WAIT_HELP", "PART_HELP", "lock_wait_option", "part_option", "part_stack", "require_applied"]

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


def require_applied(handle: Any, backend: Any, stack: str, reads: tuple[str, ...], say_err: Callable[[str], Any]
                    ) -> None:
    """A part reads the outputs of the stacks before it (its program's stack references): one that is not in the
    backend yet, or was never applied (no `part` output), is said here with the command that applies it, before
    the engine starts. Each read stack is asked for its outputs alone: `pulumi stack ls` was seen to hang on the
    PostgreSQL backend when two ran at once (docs/state.md)."""
    from pulumi.automation import CommandError

    missing: list[str] = []
    for name in reads:
        try:
            outputs = handle.workspace.stack_outputs(name)
        except CommandError as exc:
            if "no stack named" not in str(exc):
                raise
            outputs = {}
        if "part" not in outputs:
            missing.append(name)
    if missing:
        parts = " ".join(name.rsplit("-", 1)[-1] for name in missing)
        say_err(f"error: stack {stack} reads the outputs of {', '.join(missing)}, not applied in"
                f" {backend.display_url} yet: apply it first (clusterforge up INVENTORY --part {parts})")
        raise typer.Exit(1)
