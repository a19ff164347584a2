"""`clusterforge validate | plan | render`: the declaration checked, planned, and written out."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path

import typer

from clusterforge.cli._common import err, load, out, say

__all__ = ["register", "validate", "plan", "render", "Format"]


class Format(str, Enum):
    table = "table"
    json = "json"


def validate(file: Path = typer.Argument(..., help="inventory YAML")) -> None:
    """Validate a declaration: exit 0, or 1 with FILE:LINE:COL: field: message lines on stderr."""
    from clusterforge.plan.fabric_checks import check_fabric

    _, plan_obj, _ = load(file)
    for warning in plan_obj.warnings:
        say(err, f"warning: {warning}")
    problems = check_fabric(plan_obj)
    for problem in problems:
        say(err, f"{file}:1:1: fabric: {problem}")
    if problems:
        raise typer.Exit(1)
    summary = plan_obj.summary
    out.print(f"{file}: ok — {summary['servers']} servers, {summary['gpus']} GPUs,"
              f" {summary['racks']} racks, {summary['power_kw']} kW", markup=False, highlight=False)


def plan(file: Path = typer.Argument(..., help="inventory YAML"),
         format: Format = typer.Option(Format.table, "--format", "-f", help="table or json")) -> None:
    """Plan a cluster: racks, power, fabrics, addresses, links, BOM."""
    _, plan_obj, _ = load(file)
    if format is Format.json:
        sys.stdout.write(json.dumps(plan_obj.to_dict(), indent=1))
        sys.stdout.write("\n")
        return
    from clusterforge.render.tables import plan_tables

    for table in plan_tables(plan_obj):
        out.print(table)
    for warning in plan_obj.warnings:
        err.print(f"warning: {warning}", markup=False, highlight=False)


def render(file: Path = typer.Argument(..., help="inventory YAML"),
           out_dir: Path = typer.Option(..., "--out", "-o", help="output directory")) -> None:
    """Render Ansible inventory, host_vars, switch configs and the asset register into DIR (atomically)."""
    from clusterforge.render import render_all, write_tree

    spec, plan_obj, _ = load(file)
    files = render_all(spec, plan_obj)
    write_tree(out_dir, files)
    out.print(f"wrote {len(files)} files under {out_dir}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
    app.command("plan")(plan)
    app.command("render")(render)
