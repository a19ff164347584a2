"""`clusterforge ib check`: the declaration's InfiniBand planes in a SIMULATED subnet (ibsim, OpenSM, diagnostics).

Exit codes as in cli/_common.py: 0 every plane as planned, 1 a difference (or a plane only partly simulated),
2 usage, 3 the simulator or diagnostics missing (the Debian packages to install are named).
"""

from __future__ import annotations

from pathlib import Path

import typer

from clusterforge.cli._common import Format, emit_json, err, format_option, load, out, say

__all__ = ["register"]

ib_app = typer.Typer(help="InfiniBand planes checked in a simulated subnet (ibsim + OpenSM).", no_args_is_help=True,
                     rich_markup_mode=None)


@ib_app.command("check")
def check(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    pull: bool = typer.Option(True, "--pull/--no-pull",
                              help="after the first look, unplug one switch-to-switch cable and check OpenSM reroutes"),
    format: Format = format_option(),
) -> None:
    """Simulate each InfiniBand plane (ibsim), bring it up with OpenSM on the rendered opensm.conf and partitions,
    discover it (ibnetdiscover, dump_fts, sminfo, saquery) and compare with the plan's cables: links missing,
    unexpected or swapped, SM state, partitions, unreachable HCA pairs, a pulled link. SIMULATED: no hardware."""
    from clusterforge.ibcheck import SimFailed, ToolsMissing, check_plan, report_document, report_lines

    _, plan, _ = load(inventory)
    try:
        runs = check_plan(plan, pull=pull)
    except ToolsMissing as exc:
        say(err, f"error: the simulated subnet needs the Debian packages {', '.join(exc.packages)} "
                 f"(apt-get install {' '.join(exc.packages)})")
        raise typer.Exit(3) from None
    except SimFailed as exc:
        say(err, f"error: the simulated subnet did not come up: {exc}")
        raise typer.Exit(3) from None
    except ValueError as exc:  # a plane the simulator cannot represent (a switch of more than 254 ports)
        say(err, f"error: {exc}")
        raise typer.Exit(1) from None
    if format == Format.json:
        emit_json(report_document(runs))
    else:
        for line in report_lines(runs):
            say(out, line)
    if not all(run.ok for run in runs):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(ib_app, name="ib")
