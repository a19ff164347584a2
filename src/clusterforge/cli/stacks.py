"""`clusterforge stacks`: the stacks that hold a declaration, in apply order (clusterforge.plan.stacks)."""

from __future__ import annotations

from pathlib import Path

import typer

from clusterforge.cli._common import Format, emit_json, format_option, out

__all__ = ["register"]


def stacks_cmd(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="stack name [default: the inventory's stem]"),
    format: Format = format_option(),
) -> None:
    """The stacks that hold the declaration, in apply order: one, or split by SU (state: {split: su}) the site
    stack, one per SU (side by side: one wave) and services. Reads no state; ci/clusterforge-apply.sh applies them.

    --format json: {split, base, waves: [[{stack, part, reads}]]}."""
    from clusterforge.cli._args import check_stack
    from clusterforge.cli._common import load
    from clusterforge.plan.stacks import part_stack, split_stacks

    base = check_stack(stack or inventory.stem, "" if stack else str(inventory))
    _, plan, _ = load(inventory)
    split = split_stacks(plan)
    waves = [[{"stack": part_stack(base, p.name), "part": p.name, "reads": [part_stack(base, r) for r in p.reads]}
              for p in wave] for wave in split.waves()]
    if format is Format.json:
        emit_json({"split": split.mode, "base": base, "waves": waves})
        return
    for number, parts in enumerate(split.waves(), 1):
        together = " (side by side)" if len(parts) > 1 else ""
        names = " ".join(part_stack(base, p.name) for p in parts)
        out.print(f"{number}. {names}{together}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("stacks")(stacks_cmd)
