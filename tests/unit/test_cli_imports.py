"""Start-up is part of every command: `clusterforge --version` imports no command, building the app imports
no model, planner, renderer, Pulumi or Rich table, and `validate` imports no renderer or Pulumi. Structural
checks on the modules a fresh process has loaded; the start-up times are benchmarks/cli_startup.py's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import clusterforge
from clusterforge.cli import launch

ROOT = Path(__file__).parents[2]

# what the app needs to parse a command line: typer (click), Rich's console, the command modules
APP_NEVER = ("clusterforge.model", "clusterforge.plan", "clusterforge.loading", "clusterforge.render",
             "clusterforge.pulumi", "clusterforge.lab", "clusterforge.export", "clusterforge.verify",
             "clusterforge.ops", "clusterforge.sot", "clusterforge.schedulers", "pulumi", "pydantic", "ruamel",
             "jinja2", "netaddr", "yaml",
             "rich.table", "rich.progress", "ansible_runner", "requests")
VERSION_NEVER = ("typer", "click", "rich", *APP_NEVER)
VALIDATE_NEVER = ("clusterforge.render", "clusterforge.pulumi", "clusterforge.lab", "clusterforge.export",
                  "clusterforge.verify", "clusterforge.sot", "pulumi", "jinja2", "rich.table", "rich.progress",
                  "ansible_runner", "requests", "ruamel")  # ruamel: lab.yaml takes the fast path (yamlfast)

# runs in a fresh interpreter: the command line, then the names of every module loaded, as JSON in a file
PROBE = """
import atexit, json, os, sys
atexit.register(lambda: open(os.environ["PROBE_OUT"], "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["clusterforge", *json.loads(os.environ["PROBE_ARGV"])]
if sys.argv[1:] == ["--import-app"]:
    import clusterforge.cli.app
else:
    from clusterforge.cli import main
    main()
"""


def loaded_after(tmp_path: Path, *argv: str) -> set[str]:
    report = tmp_path / "modules.json"
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PROBE_ARGV": json.dumps(argv), "PROBE_OUT": str(report)})
    assert result.returncode == 0, result.stderr
    return set(json.loads(report.read_text()))


def _heavy(modules: set[str], never: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in never))


def test_version_imports_no_command(tmp_path: Path) -> None:
    assert _heavy(loaded_after(tmp_path, "--version"), VERSION_NEVER) == []


def test_building_the_app_imports_no_model_planner_renderer_or_pulumi(tmp_path: Path) -> None:
    modules = loaded_after(tmp_path, "--import-app")
    assert "clusterforge.cli.core" in modules  # the probe did build the app
    assert _heavy(modules, APP_NEVER) == []


def test_validate_imports_what_it_needs_and_no_renderer_or_pulumi(tmp_path: Path) -> None:
    modules = loaded_after(tmp_path, "validate", "inventory/lab.yaml")
    assert {"clusterforge.model", "clusterforge.plan.fabric_checks"} <= modules
    assert _heavy(modules, VALIDATE_NEVER) == []


def test_validate_file_runs_without_the_app_or_rich(tmp_path: Path) -> None:
    """`validate FILE` has nothing to parse: no typer app (cli/validation), and lines Rich would write
    unchanged are written without it (cli/_console.PlainLines)."""
    modules = loaded_after(tmp_path, "validate", "inventory/lab.yaml")
    assert _heavy(modules, ("typer", "click", "rich", "clusterforge.cli.app", "clusterforge.cli._common")) == []


def test_render_file_out_dir_runs_without_the_app_or_rich(tmp_path: Path) -> None:
    """`render FILE --out DIR` likewise (cli/rendering); the switch configs of lab.yaml (SONiC's FRR) still
    load Jinja2, so it is not in this list (tests/unit/test_switch_writers.py: EOS and Cumulus do not)."""
    modules = loaded_after(tmp_path, "render", "inventory/lab.yaml", "--out", str(tmp_path / "out"))
    assert "clusterforge.render.registry" in modules and (tmp_path / "out" / "switches").is_dir()
    assert _heavy(modules, ("typer", "click", "rich", "clusterforge.cli.app", "clusterforge.cli._common")) == []


def test_package_version_is_pyproject_version() -> None:
    """`--version` prints clusterforge.__version__ without reading the installed metadata."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert clusterforge.__version__ == project["version"] == launch.version()
