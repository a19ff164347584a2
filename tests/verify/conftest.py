"""Fixtures for the verify tests.

``rendered_lab``: tests/verify/data/verify-lab.yaml rendered (inventory/lab.yaml under the name
``cfverify`` in 198.19.64.0/19, so this lab runs beside others on one machine).

``fresh_lab``: that lab brought up from the base image (nothing configured by the roles), torn
down at the end of the session; skips where the lab cannot run.

``lab_cluster``: the shared lab of tests/lab_cluster/conftest.py when that file exists (contract:
``.inventory_dir`` rendered, ``.ssh_config``, ``.hosts``), else ``fresh_lab`` under the same
contract. ``lab_converged`` (the site playbook's converge) is taken from there too when defined.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERIFY_LAB = Path(__file__).resolve().parent / "data" / "verify-lab.yaml"
SHARED_CONFTEST = ROOT / "tests" / "lab_cluster" / "conftest.py"
SHARED_FIXTURES = ("lab_cluster", "lab_converged")


@dataclass(frozen=True)
class LabCluster:
    inventory_dir: Path
    ssh_config: Path
    hosts: tuple[str, ...]
    name: str


def render(declaration: Path, out: Path) -> Path:
    from clusterforge.loading import load_and_plan
    from clusterforge.render import render_all, write_tree

    spec, plan, _ = load_and_plan(declaration)
    write_tree(out, render_all(spec, plan))
    return out


@pytest.fixture(scope="session")
def rendered_lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render(VERIFY_LAB, tmp_path_factory.mktemp("verify-lab") / "rendered")


@pytest.fixture(scope="session")
def fresh_lab(rendered_lab: Path, request: pytest.FixtureRequest) -> LabCluster:
    from clusterforge.lab import down, missing_prerequisites, up
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.loading import load_and_plan
    from clusterforge.render import render_all

    why = missing_prerequisites()
    if why:
        pytest.skip("the lab cannot run here: " + ", ".join(why))
    spec, plan, _ = load_and_plan(VERIFY_LAB)
    topology = lab_topology(spec, plan, render_all(spec, plan))
    down(topology.name)  # a lab left by an earlier run may carry changes: start from the base image
    request.addfinalizer(lambda: down(topology.name))
    result = up(topology)
    servers = tuple(d.name for d in plan.devices if d.kind == "server")
    return LabCluster(rendered_lab, result.ssh_config, servers, topology.name)


def _shared_fixtures() -> dict[str, object]:
    """Fixtures of tests/lab_cluster/conftest.py, loaded by path (conftests of sibling dirs are not visible)."""
    if not SHARED_CONFTEST.is_file():
        return {}
    sys.path.insert(0, str(SHARED_CONFTEST.parent))
    spec = importlib.util.spec_from_file_location("_cf_shared_lab_cluster_conftest", SHARED_CONFTEST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return {name: getattr(module, name) for name in SHARED_FIXTURES if hasattr(module, name)}


_shared = _shared_fixtures()
if "lab_cluster" in _shared:
    lab_cluster = _shared["lab_cluster"]
else:

    @pytest.fixture(scope="session")
    def lab_cluster(fresh_lab: LabCluster) -> LabCluster:
        return fresh_lab


if "lab_converged" in _shared:
    lab_converged = _shared["lab_converged"]
