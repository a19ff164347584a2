"""Golden files for the rendered Ansible inventory, host_vars, asset register, gateway table, Slurm files
(slurm/: slurm.conf, gres.conf, topology.conf, cgroup.conf, accounts.json, nccl/<host>.conf) and monitoring
files (monitoring/: prometheus.yml, alertmanager.yml, rules/<group>.yml, the Grafana dashboards
dashboards/<name>.json and their provisioning document dashboards.yml) of the lab example.

Regenerate with CF_REGEN_GOLDENS=1 pytest tests/golden and review the diff.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.render.ansible_inventory import render_ansible
from clusterforge.render.assets import render_assets
from clusterforge.render.gateways import render_gateways
from clusterforge.render.tree import render_tree

ROOT = Path(__file__).parents[2]
GOLDEN = Path(__file__).parent / "lab"


def _rendered() -> dict[str, str]:
    spec, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    tree = render_tree(plan)
    return {**render_ansible(plan), **render_assets(plan), **render_gateways(plan), **tree.slurm_files(),
            **tree.monitoring_files()}


FILES = _rendered()


@pytest.mark.parametrize("relative", sorted(FILES))
def test_matches_golden(relative: str):
    golden = GOLDEN / relative
    if os.environ.get("CF_REGEN_GOLDENS"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(FILES[relative])
    assert golden.is_file(), f"no golden for {relative}; run with CF_REGEN_GOLDENS=1"
    expected = golden.read_text()
    if expected != FILES[relative]:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), FILES[relative].splitlines(True),
                                            f"golden/{relative}", f"rendered/{relative}"))
        pytest.fail(f"rendered output differs from the golden file:\n{diff}")


def test_no_stale_goldens():
    present = {str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*") if p.is_file()}
    assert present == set(FILES)
