"""The verify lab (tests/verify/data/verify-lab.yaml) for the tests that bring it up themselves, as its own
lab ``cfverif2`` in 198.19.96.0/19: its declaration copied beside the catalog, the lab it plans to, and commands
on its hosts (a plain module in tests/, importable from every test directory; conftest.py names clash across them).

Its own name and address block, not the verify tests' ``cfverify`` (198.19.64.0/19): ``make test`` runs two
pytest workers (tests/conftest.py), and the verify tests' lab stays up on one of them, beside the shared lab,
while these tests may bring theirs up on the other.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from clusterforge.lab import LabTopology
from clusterforge.plan import Plan

ROOT = Path(__file__).resolve().parents[1]
VERIFY_LAB = ROOT / "tests" / "verify" / "data" / "verify-lab.yaml"
CATALOG_FILES = "catalog_files: [catalog/servers.yaml, catalog/switches.yaml, catalog/pdus.yaml, catalog/cables.yaml]"
LAB = "cfverif2"
# the verify lab's block, 198.19.64.0/19, moved up by 32 in the third octet: 198.19.96.0/19, which no other lab uses
_BLOCK = re.compile(r"\b198\.19\.(6[4-9]|[78]\d|9[0-5])\.")


def _own_lab(text: str) -> str:
    """The verify lab's declaration as lab ``cfverif2`` in 198.19.96.0/19 (name and addresses only)."""
    text, named = re.subn(r"(?m)^name: cfverify$", f"name: {LAB}", text)
    assert named == 1, "tests/verify/data/verify-lab.yaml no longer says `name: cfverify`"
    return _BLOCK.sub(lambda m: f"198.19.{int(m.group(1)) + 32}.", text)


def verify_lab_declaration(directory: Path, edit: Callable[[str], str] | None = None) -> Path:
    """The verify lab's declaration beside a copy of the catalog (catalog files stay inside its
    directory), with ``edit`` applied to its text first."""
    shutil.copytree(ROOT / "inventory" / "catalog", directory / "catalog")
    text = _own_lab(re.sub(r"catalog_files: \[[^\]]*\]", CATALOG_FILES, VERIFY_LAB.read_text()))
    (directory / f"{LAB}.yaml").write_text(edit(text) if edit else text)
    return directory / f"{LAB}.yaml"


def planned_lab(declaration: Path) -> tuple[Plan, LabTopology]:
    """``declaration``'s plan and the lab it plans (the topology ``lab.up`` brings up)."""
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.loading import load_and_plan
    from clusterforge.render import render_tree

    _, plan, _ = load_and_plan(declaration)
    return plan, lab_topology(plan, render_tree(plan))


def on_host(topology: LabTopology, host: str, script: str) -> str:
    """``script``'s output (stripped) on a lab host, over the lab's SSH; fails the test when it fails."""
    from clusterforge.lab import ssh_command

    proc = subprocess.run(ssh_command(topology.name, host, [script]), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()
