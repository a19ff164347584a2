"""Fixtures for the verify tests.

``rendered_lab``: tests/verify/data/verify-lab.yaml rendered (inventory/lab.yaml under the name
``cfverify`` in 198.19.64.0/19, so this lab runs beside others on one machine).

``fresh_lab``: that lab brought up from the base image (nothing configured by the roles), torn
down at the end of the session; skips where the lab cannot run.

``lab_cluster`` and ``lab_converged``: the shared lab of inventory/lab.yaml and its converge, from
tests/conftest.py (contract: ``.inventory_dir`` rendered, ``.ssh_config``, ``.hosts``).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERIFY_LAB = Path(__file__).resolve().parent / "data" / "verify-lab.yaml"


@dataclass(frozen=True)
class LabCluster:
    inventory_dir: Path
    ssh_config: Path
    hosts: tuple[str, ...]
    name: str


def beside_catalog(source: Path, directory: Path) -> Path:
    """A copy of a test declaration next to a copy of inventory/catalog: catalog_files stay in its directory."""
    shutil.copytree(ROOT / "inventory" / "catalog", directory / "catalog", dirs_exist_ok=True)
    target = directory / source.name
    target.write_text(re.sub(r"(\.\./)+inventory/catalog/", "catalog/", source.read_text()))
    return target


@pytest.fixture(scope="session")
def verify_lab_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return beside_catalog(VERIFY_LAB, tmp_path_factory.mktemp("verify-lab-decl"))


def render(declaration: Path, out: Path) -> Path:
    from clusterforge.loading import load_and_plan
    from clusterforge.render import render_all, write_tree

    spec, plan, _ = load_and_plan(declaration)
    write_tree(out, render_all(plan))
    return out


@pytest.fixture(scope="session")
def rendered_lab(tmp_path_factory: pytest.TempPathFactory, verify_lab_file: Path) -> Path:
    return render(verify_lab_file, tmp_path_factory.mktemp("verify-lab") / "rendered")


@pytest.fixture(scope="session")
def fresh_lab(rendered_lab: Path, verify_lab_file: Path, request: pytest.FixtureRequest) -> LabCluster:
    from clusterforge.lab import down, missing_prerequisites, up
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.loading import load_and_plan
    from clusterforge.render import render_tree

    why = missing_prerequisites()
    if why:
        pytest.skip("the lab cannot run here: " + ", ".join(why))
    spec, plan, _ = load_and_plan(verify_lab_file)
    topology = lab_topology(plan, render_tree(plan))
    down(topology.name)  # a lab left by an earlier run may carry changes: start from the base image
    request.addfinalizer(lambda: down(topology.name))
    result = up(topology)
    servers = tuple(d.name for d in plan.devices if d.kind == "server")
    return LabCluster(rendered_lab, result.ssh_config, servers, topology.name)


# lab_cluster and lab_converged come from tests/conftest.py (the shared lab of inventory/lab.yaml);
# fresh_lab above is this directory's own, never-configured lab for the checks that must fail.
