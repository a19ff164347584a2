"""`clusterforge validate | plan | render`: the declaration checked, planned, and written out."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from clusterforge.cli._common import Format, collector_paused, emit_json, err, format_option, load, out, say
from clusterforge.cli._output import out_arg, write_out
from clusterforge.cli.rendering import SWITCHES_ONLY_HELP, rendered_files

__all__ = ["register", "validate", "plan", "render", "Format"]


def validate(file: Path = typer.Argument(..., help="inventory YAML"), format: Format = format_option()) -> None:
    """Validate a declaration: exit 0, or 1 with FILE:LINE:COL: field: message lines on stderr."""
    from clusterforge.cli.validation import validate_declaration

    status = validate_declaration(file, format is Format.json, lambda text: out.print(text, markup=False,
                                  highlight=False), lambda text: say(err, text))
    if status:
        raise typer.Exit(status)


@collector_paused
def plan(file: Path = typer.Argument(..., help="inventory YAML"),
         format: Format = typer.Option(Format.table, "--format", "-f", help="table or json")) -> None:
    """Plan a cluster: racks, power, fabrics, addresses, links, BOM."""
    _, plan_obj, _ = load(file)
    if format is Format.json:  # json.dumps(plan.to_dict(), indent=1)'s text, one row at a time
        from clusterforge.render.jsonstream import write_json

        write_json(plan_obj.json_fields(), sys.stdout.write)
        sys.stdout.write("\n")
        return
    from clusterforge.render.tables import plan_tables

    for table in plan_tables(plan_obj):
        out.print(table)
    for warning in plan_obj.warnings:
        err.print(f"warning: {warning}", markup=False, highlight=False)


@collector_paused
def render(file: Path = typer.Argument(..., help="inventory YAML"),
           out_dir: Path = typer.Option(..., "--out", "-o", help="output directory", parser=out_arg),
           format: Format = format_option(),
           switches_only: bool = typer.Option(False, "--switches-only", help=SWITCHES_ONLY_HELP)) -> None:
    """Render Ansible inventory, host_vars, switch configs and the asset register into DIR (atomically)."""
    spec, plan_obj, _ = load(file)
    files = rendered_files(plan_obj, switches_only)
    write_out(out_dir, files)
    if format is Format.json:
        emit_json({"out": str(out_dir), "files": sorted(files)})
        return
    out.print(f"wrote {len(files)} files under {out_dir}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
    app.command("plan")(plan)
    app.command("render")(render)
