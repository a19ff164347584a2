"""The engine clusterforge looks for is the one tools/pulumi-build builds and the SDK pyproject.toml pins,
and every engine run is told to use this interpreter."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

from clusterforge.pulumi.automation import Backend
from clusterforge.pulumi.engine import ENGINE_VERSION

ROOT = Path(__file__).resolve().parents[2]


def test_engine_version_is_the_build_modules_and_the_sdks() -> None:
    gomod = (ROOT / "tools" / "pulumi-build" / "go.mod").read_text()
    pinned = re.search(r"^\s*github\.com/pulumi/pulumi/pkg/v3 v(\S+)", gomod, re.MULTILINE)
    assert pinned and pinned.group(1) == ENGINE_VERSION
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"pulumi=={ENGINE_VERSION}" in deps


def test_programs_run_on_this_interpreter(tmp_path: Path) -> None:
    env = Backend(tmp_path, f"file://{tmp_path}").env(tmp_path / "engine" / "bin")
    assert env["PULUMI_PYTHON_CMD"] == sys.executable
    assert env["PATH"].split(":")[:2] == [str(tmp_path / "engine" / "bin"), str(Path(sys.executable).parent)]
