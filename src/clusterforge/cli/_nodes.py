"""The live schedulers a node command drains and resumes through, with the command line's exit codes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from clusterforge.cli._common import err, say, usage_error

if TYPE_CHECKING:
    from clusterforge.schedulers import NodeControl, Reach

__all__ = ["SLURM_SWITCH", "node_controls"]

SLURM_SWITCH = "slurm"  # the driver `--no-slurm` turns off


def node_controls(reach: Reach) -> tuple[NodeControl, ...]:
    """The live schedulers a command drains and resumes nodes through (clusterforge.schedulers.controls);
    one that cannot be reached is exit 3, a setting for one the declaration does not run is exit 2."""
    from clusterforge.schedulers import Unreachable, controls

    try:
        return controls(reach)
    except Unreachable as exc:
        if exc.usage:
            usage_error(str(exc))
        say(err, f"error: {exc}")
        raise typer.Exit(3) from None
