"""clusterforge command line: validate, plan, render, lab, preview/up, verify, accept, report, diff.

Exit codes: 0 ok, 1 the declaration (or the cluster) is wrong, 2 usage error, 3 environment problem.
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console

from clusterforge.loading import DeclarationError, load_and_plan

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Infrastructure as code for AI GPU clusters: declare, plan, apply, verify.")
out = Console() if sys.stdout.isatty() else Console(width=200)  # pipes get full rows, not wraps
err = Console(stderr=True)


class Format(str, Enum):
    table = "table"
    json = "json"


def _fail_declaration(exc: DeclarationError) -> None:
    for problem in exc.problems:
        err.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(1)


def _load(path: Path):
    try:
        return load_and_plan(path)
    except DeclarationError as exc:
        _fail_declaration(exc)


@app.command()
def validate(file: Path = typer.Argument(..., help="inventory YAML")) -> None:
    """Validate a declaration: exit 0, or 1 with FILE:LINE:COL: field: message lines on stderr."""
    from clusterforge.plan.fabric_checks import check_fabric

    spec, plan, _ = _load(file)
    for warning in plan.warnings:
        err.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    problems = check_fabric(plan)
    for problem in problems:
        err.print(f"{file}:1:1: fabric: {problem}", markup=False, highlight=False, soft_wrap=True)
    if problems:
        raise typer.Exit(1)
    out.print(f"{file}: ok — {plan.summary['servers']} servers, {plan.summary['gpus']} GPUs,"
              f" {plan.summary['racks']} racks, {plan.summary['power_kw']} kW", markup=False, highlight=False)


@app.command()
def plan(file: Path = typer.Argument(..., help="inventory YAML"),
         format: Format = typer.Option(Format.table, "--format", "-f", help="table or json")) -> None:
    """Plan a cluster: racks, power, fabrics, addresses, links, BOM."""
    spec, plan_obj, _ = _load(file)
    if format is Format.json:
        sys.stdout.write(json.dumps(plan_obj.to_dict(), indent=1))
        sys.stdout.write("\n")
        return
    from clusterforge.render.tables import plan_tables

    for table in plan_tables(plan_obj):
        out.print(table)
    for warning in plan_obj.warnings:
        err.print(f"warning: {warning}", markup=False, highlight=False)


@app.command()
def render(file: Path = typer.Argument(..., help="inventory YAML"),
           out_dir: Path = typer.Option(..., "--out", "-o", help="output directory")) -> None:
    """Render Ansible inventory, host_vars, switch configs and the asset register into DIR (atomically)."""
    from clusterforge.render import render_all, write_tree

    spec, plan_obj, _ = _load(file)
    files = render_all(spec, plan_obj)
    write_tree(out_dir, files)
    out.print(f"wrote {len(files)} files under {out_dir}", markup=False, highlight=False)


def _register_optional() -> None:
    """Command groups that live in their own modules."""
    from importlib import import_module

    for module in ("clusterforge.cli_lab", "clusterforge.cli_apply", "clusterforge.cli_verify",
                   "clusterforge.cli_report"):
        try:
            mod = import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        mod.register(app)


def main() -> None:
    _register_optional()
    try:
        app()
    except DeclarationError as exc:
        for problem in exc.problems:
            err.print(str(problem), markup=False, highlight=False)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        sys.exit(3)


if __name__ == "__main__":
    main()
