"""`clusterforge report` and `clusterforge diff`: the Plan as pages people look at, and what a change does.

diff reads each side from a file or from Git (`REV:path`, as `git show` spells it), so CI can compare a
pull request's declaration with the base branch's:  clusterforge diff origin/main:inventory/x.yaml inventory/x.yaml
"""

from __future__ import annotations

import json
import sys
import tempfile
from enum import Enum
from pathlib import Path

import typer

from clusterforge.cli._common import Format, collector_paused, emit_json, err, format_option, load, out, print_problems
from clusterforge.cli._gitside import load_side
from clusterforge.cli._output import out_arg, write_out

__all__ = ["register", "report", "diff", "DiffFormat"]

MAX_ERROR_LINES = 50


class DiffFormat(str, Enum):
    markdown = "markdown"
    json = "json"


@collector_paused
def report(file: Path = typer.Argument(..., help="inventory YAML"),
           out_dir: Path = typer.Option(..., "--out", "-o", help="output directory (report/ is written inside)",
                                         parser=out_arg),
           format: Format = format_option(),
           ) -> None:
    """Write an HTML report (rack elevations, fabrics, power, IP plan, BOM, TCO) with SVGs and bom.csv."""
    from clusterforge.render.report import render_report

    spec, plan, _ = load(file)
    files = render_report(plan)
    write_out(out_dir, files)
    for warning in plan.warnings:
        err.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    if format is Format.json:
        emit_json({"out": str(out_dir), "files": sorted(files), "index": str(out_dir / "report" / "index.html")})
        return
    out.print(f"wrote {len(files)} files; open {out_dir / 'report' / 'index.html'}", markup=False,
              highlight=False)


def diff(old: str = typer.Argument(..., help="old inventory: a file, or REV:path from Git"),
         new: str = typer.Argument(..., help="new inventory: a file, or REV:path from Git"),
         format: DiffFormat = typer.Option(DiffFormat.markdown, "--format", "-f", help="markdown or json"),
         ) -> None:
    """Compare two declarations: racks, devices, links, addresses, rendered files. Exit 1 if any existing
    device is renumbered or moved."""
    from clusterforge.plan.diff import diff_plans, to_dict, to_markdown
    from clusterforge.render import render_all

    with tempfile.TemporaryDirectory(prefix="clusterforge-diff-") as scratch:
        old_spec, old_plan, old_problems = load_side(old, Path(scratch) / "old")
        new_spec, new_plan, new_problems = load_side(new, Path(scratch) / "new")
    if old_problems or new_problems:
        print_problems(old_problems + new_problems)
        raise typer.Exit(1)
    result = diff_plans(old_plan, new_plan, render_all(old_plan), render_all(new_plan))
    if format is DiffFormat.json:
        sys.stdout.write(json.dumps(to_dict(result), indent=1) + "\n")
    else:
        sys.stdout.write(to_markdown(result, old, new))
    if not result.ok:
        for change in result.renumbered[:MAX_ERROR_LINES]:
            err.print(f"error: {change.name}: {change.field} renumbered {change.old} -> {change.new}",
                      markup=False, highlight=False, soft_wrap=True)
        if len(result.renumbered) > MAX_ERROR_LINES:
            err.print(f"error: … and {len(result.renumbered) - MAX_ERROR_LINES} more", markup=False,
                      highlight=False)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
    app.command("diff")(diff)
