"""The installed package works without the checkout: build the wheel, install it into a fresh venv
outside the repository, and run every command from an empty directory.

The fresh venv takes its third-party dependencies from this interpreter's site-packages through a
``.pth`` line (nothing is downloaded); clusterforge itself comes only from the wheel, which this
test checks before anything else. Outputs are compared byte for byte with the checkout's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.render import render_all
from clusterforge.render.report import render_report

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventory" / "lab.yaml"
COMMANDS = [[], ["validate"], ["plan"], ["render"], ["report"], ["diff"], ["lab"], ["lab", "up"], ["lab", "status"],
            ["lab", "down"], ["lab", "ssh"], ["preview"], ["up"], ["destroy"], ["verify"], ["accept"]]
HELP_ALL = """
import sys
from typer.testing import CliRunner
from clusterforge.cli import app
runner = CliRunner()
for argv in {commands!r}:
    result = runner.invoke(app, [*argv, "--help"], terminal_width=200)
    if result.exit_code != 0 or "Usage:" not in result.output:
        sys.exit(f"{{argv}}: exit {{result.exit_code}}\\n{{result.output}}")
print(len({commands!r}))
"""
WHERE = """
import json, clusterforge, clusterforge.paths as p
print(json.dumps({"module": clusterforge.__file__, "data": str(p.data_root()), "checkout": p.checkout_root()}))
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{argv}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str], Path]:
    """(venv bin dir, environment without any checkout on it, an empty working directory)."""
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)],
         base, dict(os.environ))
    wheel = next(dist.glob("clusterforge-*.whl"))
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base, dict(os.environ))
    python = venv / "bin" / "python"
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], base,
                        {"PATH": os.environ["PATH"]}).stdout.strip())
    # third-party packages from this interpreter; a directory named in a .pth gets no .pth processing of
    # its own, so the shared venv's editable clusterforge (a .pth there) never reaches the fresh venv
    (purelib / "shared-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
          str(wheel)], base, dict(os.environ))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("CLUSTERFORGE_")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    empty = base / "empty"
    empty.mkdir()
    return venv / "bin", env, empty


def test_clusterforge_comes_from_the_wheel(installed):
    bin_dir, env, empty = installed
    where = json.loads(_run([str(bin_dir / "python"), "-c", WHERE], empty, env).stdout)
    venv = bin_dir.parent
    assert Path(where["module"]).is_relative_to(venv), where
    assert Path(where["data"]) == Path(where["module"]).parent / "_data"
    assert where["checkout"] is None
    for part in ("templates/switch", "templates/report", "roles/nvidia_driver", "playbooks/site.yml",
                 "stacks/cluster/__main__.py"):
        assert (Path(where["data"]) / part).exists(), part


def test_help_of_every_command(installed):
    bin_dir, env, empty = installed
    top = _run([str(bin_dir / "clusterforge"), "--help"], empty, env).stdout
    for name in ("validate", "plan", "render", "report", "diff", "lab", "preview", "up", "destroy", "verify", "accept"):
        assert name in top
    counted = _run([str(bin_dir / "python"), "-c", HELP_ALL.format(commands=COMMANDS)], empty, env).stdout
    assert counted.strip() == str(len(COMMANDS))
    assert list(empty.iterdir()) == []  # --help writes nothing


def test_validate_plan_render_report_match_the_checkout(installed, tmp_path):
    bin_dir, env, empty = installed
    cf = str(bin_dir / "clusterforge")
    assert "ok" in _run([cf, "validate", str(INVENTORY)], empty, env).stdout
    spec, plan, _ = load_and_plan(INVENTORY)
    planned = json.loads(_run([cf, "plan", str(INVENTORY), "--format", "json"], empty, env).stdout)
    assert planned == json.loads(json.dumps(plan.to_dict()))
    _run([cf, "render", str(INVENTORY), "--out", "rendered"], empty, env)
    _run([cf, "report", str(INVENTORY), "--out", "report"], empty, env)
    for out, expected in (("rendered", render_all(plan)), ("report", render_report(plan))):
        written = {p.relative_to(empty / out).as_posix(): p.read_bytes()
                   for p in (empty / out).rglob("*") if p.is_file()}
        assert set(written) == set(expected)
        wrong = [k for k, v in expected.items() if written[k] != (v.encode() if isinstance(v, str) else v)]
        assert not wrong, wrong[:5]
