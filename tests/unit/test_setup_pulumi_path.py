"""scripts/setup-pulumi.sh with a pulumi of the pinned version on PATH: linked as tools/bin/pulumi,
where the code runs the engine from (no engine build); another version is not taken."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PINNED = "v" + re.search(r"github\.com/pulumi/pulumi/pkg/v3 v(\S+)",
                         (ROOT / "tools" / "pulumi-build" / "go.mod").read_text()).group(1)


def _layout(tmp: Path, reports: str) -> tuple[Path, dict[str, str]]:
    """A checkout with only the script and the build module, and a `pulumi` on PATH reporting ``reports``.
    GO is `false`, so the script stops at the first build it would run."""
    repo = tmp / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup-pulumi.sh", repo / "scripts")
    shutil.copytree(ROOT / "tools" / "pulumi-build", repo / "tools" / "pulumi-build")
    elsewhere = tmp / "opt" / "bin"
    elsewhere.mkdir(parents=True)
    fake = elsewhere / "pulumi"
    fake.write_text(f"#!/bin/sh\necho {reports}\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{elsewhere}:/usr/bin:/bin", "GO": "false",
           "CLUSTERFORGE_PULUMI_CACHE": str(tmp / "engine-cache")}  # never the machine's cache
    return repo, env


def test_the_pinned_version_on_path_is_linked_not_built(tmp_path):
    repo, env = _layout(tmp_path, PINNED)
    result = subprocess.run(["bash", str(repo / "scripts" / "setup-pulumi.sh")], capture_output=True, text=True,
                            env=env, timeout=60)
    link = repo / "tools" / "bin" / "pulumi"
    assert link.is_symlink() and link.resolve() == (tmp_path / "opt" / "bin" / "pulumi").resolve()
    assert "linked as" in result.stdout and "building pulumi " not in result.stdout
    assert "building pulumi-language-python" in result.stdout  # ours is still built (GO=false stops it here)


def test_another_version_on_path_is_not_taken(tmp_path):
    repo, env = _layout(tmp_path, "v0.0.1")
    result = subprocess.run(["bash", str(repo / "scripts" / "setup-pulumi.sh")], capture_output=True, text=True,
                            env=env, timeout=60)
    assert not (repo / "tools" / "bin" / "pulumi").is_symlink()
    assert f"building pulumi {PINNED}" in result.stdout
