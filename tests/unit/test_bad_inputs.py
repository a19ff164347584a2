"""A corpus of malformed declarations: each must fail with the right file, line, field and reason."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
BAD = sorted((Path(__file__).parent.parent / "data" / "bad").glob("*.yaml"))


def _expectations(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines()[:3]:
        match = re.match(r"# expect-(\w+): ?(.*)$", line)
        if match:
            out[match[1]] = match[2]
    return out


def beside_catalog(source: Path, directory: Path) -> Path:
    """A copy of a corpus file next to a copy of inventory/catalog (catalog_files stay in the file's directory)."""
    shutil.copytree(ROOT / "inventory" / "catalog", directory / "catalog", dirs_exist_ok=True)
    target = directory / source.name
    target.write_text(re.sub(r"(\.\./)+inventory/catalog/", "catalog/", source.read_text()))
    return target


def test_corpus_is_not_empty():
    assert len(BAD) >= 12


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_declaration_is_refused_with_location(path: Path, tmp_path: Path):
    expect = _expectations(path)
    result = subprocess.run([sys.executable, "-m", "clusterforge.cli", "validate", str(beside_catalog(path, tmp_path))],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines, "no problem reported"
    pattern = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?:(?P<path>[\w.\-]+): )?(?P<msg>.+)$")
    parsed = [pattern.match(line) for line in lines]
    assert all(parsed), f"every line must be FILE:LINE:COL: [field: ]message, got {lines}"
    matching = [
        m for m in parsed
        if expect["message"] in m["msg"]
        and (m["path"] or "") == expect["path"]
        and (expect["line"] == "any" or int(m["line"]) == int(expect["line"]))
        and Path(m["file"]).name == path.name
    ]
    assert matching, f"expected {expect} in {lines}"


def test_every_problem_reported_not_just_first(tmp_path: Path):
    text = (Path(__file__).parent.parent / "data" / "bad" / "unknown-key.yaml").read_text()
    text = text.replace("    nodes: 4\n", "    nodes: many\n")
    bad = tmp_path / "two.yaml"
    bad.write_text(text.replace("../../../inventory/", ""))
    shutil.copytree(ROOT / "inventory" / "catalog", tmp_path / "catalog")
    result = subprocess.run([sys.executable, "-m", "clusterforge.cli", "validate", str(bad)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "scalable_units.0.nodez" in result.stderr and "scalable_units.0.nodes" in result.stderr


def test_usage_error_exits_2():
    result = subprocess.run([sys.executable, "-m", "clusterforge.cli", "validate"], capture_output=True, text=True)
    assert result.returncode == 2


def test_missing_file_is_a_clear_error(tmp_path: Path):
    result = subprocess.run([sys.executable, "-m", "clusterforge.cli", "validate", str(tmp_path / "nope.yaml")],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "cannot read file" in result.stderr and "Traceback" not in result.stderr
