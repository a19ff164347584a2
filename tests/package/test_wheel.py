"""The installed package works without the checkout: build the wheel, install it into a fresh venv
outside the repository, and run every command from an empty directory.

The fresh venv takes its third-party dependencies from this interpreter's site-packages through a
``.pth`` line (nothing is downloaded); clusterforge itself comes only from the wheel, which this
test checks before anything else. Outputs are compared byte for byte with the checkout's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.outdir import MANIFEST
from clusterforge.render import render_all
from clusterforge.render.report import render_report

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventory" / "lab.yaml"
COMMANDS = [[], ["validate"], ["plan"], ["render"], ["report"], ["diff"], ["lab"], ["lab", "up"], ["lab", "status"],
            ["lab", "down"], ["lab", "ssh"], ["preview"], ["up"], ["destroy"], ["verify"], ["accept"], ["engine"],
            ["engine", "status"], ["engine", "install"], ["collection", "build"]]
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
                 "stacks/cluster/__main__.py", "tools/k8s-build/kubernetes/go.sum", "tools/k8s-build/coredns/main.go",
                 "tools/k8s-build/kubernetes/cmd/cf-sim-gpu-plugin/main.go", "scripts/setup-k8s.sh"):
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
                   for p in (empty / out).rglob("*") if p.is_file() and p.name != MANIFEST}
        assert set(written) == set(expected)
        wrong = [k for k, v in expected.items() if written[k] != (v.encode() if isinstance(v, str) else v)]
        assert not wrong, wrong[:5]


def test_collection_builds_from_the_package_data(installed, tmp_path):
    bin_dir, env, empty = installed
    work = tmp_path / "work"
    work.mkdir()
    done = _run([str(bin_dir / "clusterforge"), "collection", "build", "-o", "dist"], work, env)
    tarballs = list((work / "dist").glob("clusterforge-gpu-*.tar.gz"))
    assert len(tarballs) == 1, done.stdout + done.stderr
    with tarfile.open(tarballs[0]) as tar:
        names = set(tar.getnames())
        assert tar.extractfile("LICENSE").read() == (ROOT / "LICENSE").read_bytes()
    roles = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "tasks" / "main.yml").is_file())
    assert {f"roles/{r}/tasks/main.yml" for r in roles} <= names
    assert {"playbooks/site.yml", "changelogs/changelog.yaml", "meta/runtime.yml"} <= names
    assert sorted(p.name for p in work.iterdir()) == ["dist"]  # nothing else written


def test_wheel_carries_the_licence(installed):
    bin_dir, env, empty = installed
    where = json.loads(_run([str(bin_dir / "python"), "-c", WHERE], empty, env).stdout)
    license_file = Path(where["data"]) / "LICENSE"
    assert license_file.read_bytes() == (ROOT / "LICENSE").read_bytes()
    meta = _run([str(bin_dir / "python"), "-c", "import importlib.metadata as m; print(m.metadata('clusterforge')"
                 "['License-Expression'])"], empty, env).stdout.strip()
    assert meta == "Apache-2.0"


def _engine_copy(base: Path) -> Path:
    """The checkout's engine, linked (not symlinked: the language host finds its siblings by its own path)
    into a directory that has no .venv two levels up, as a pulumi install on PATH would be."""
    source = ROOT / "tools" / "bin"
    if not (source / "pulumi").exists():
        pytest.fail(f"{source}/pulumi is missing; scripts/setup-pulumi.sh builds it")
    target = base / "pulumi-install" / "bin"
    target.mkdir(parents=True)
    for item in source.iterdir():
        real = item.resolve()
        try:
            os.link(real, target / item.name)
        except OSError:
            shutil.copy2(real, target / item.name)
    return target


def test_engine_missing_says_what_to_do_and_a_pinned_pulumi_on_path_previews(installed, tmp_path):
    bin_dir, env, empty = installed
    cf = str(bin_dir / "clusterforge")
    work = tmp_path / "work"
    work.mkdir()
    no_pulumi = {**env, "PATH": os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                                if not (Path(p) / "pulumi").exists())}
    missing = subprocess.run([cf, "engine", "status"], cwd=work, env=no_pulumi, capture_output=True, text=True,
                             timeout=120)
    assert missing.returncode == 3, missing.stdout + missing.stderr
    assert "clusterforge engine install" in missing.stderr and "on PATH" in missing.stderr
    assert "setup-pulumi.sh" not in missing.stderr.split(" — ")[0]  # the wheel's way comes first
    preview = subprocess.run([cf, "preview", str(INVENTORY), "--target", "files"], cwd=work, env=no_pulumi,
                             capture_output=True, text=True, timeout=120)
    assert preview.returncode == 3 and "clusterforge engine install" in preview.stderr, preview.stderr

    engine_bin = _engine_copy(tmp_path)
    with_pulumi = {**env, "PATH": os.pathsep.join([str(engine_bin), no_pulumi["PATH"]])}
    status = json.loads(_run([cf, "engine", "status", "--format", "json"], work, with_pulumi).stdout)
    assert status["ok"] and status["origin"] == "PATH", status
    assert Path(status["binary"]) == engine_bin / "pulumi"
    previewed = _run([cf, "preview", str(INVENTORY), "--target", "files", "--no-provision", "--no-verify", "--json"],
                     work, with_pulumi)
    document = json.loads(previewed.stdout)
    assert document["create"] and document["delete"] == [], document
    # no checkout: the stack's state lives under the working directory's .state
    assert (work / ".state" / "stacks" / "lab" / "Pulumi.yaml").is_file()
    assert not (empty / ".state").exists()
