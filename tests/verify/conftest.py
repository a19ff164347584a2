"""Fixtures for the verify tests.

``rendered_lab``: tests/verify/data/verify-lab.yaml rendered (inventory/lab.yaml under the name
``cfverify`` in 198.19.64.0/19, so this lab runs beside others on one machine).

``fresh_lab``: that lab brought up from the base image (nothing configured by the roles), torn
down at the end of the session; skips where the lab cannot run.

``lab_cluster`` and ``lab_converged``: the shared lab of inventory/lab.yaml and its converge, from
tests/conftest.py (contract: ``.inventory_dir`` rendered, ``.ssh_config``, ``.hosts``).
"""

from __future__ import annotations

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


# lab_cluster and lab_converged come from tests/conftest.py (the shared lab of inventory/lab.yaml);
# fresh_lab above is this directory's own, never-configured lab for the checks that must fail.
