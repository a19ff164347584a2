"""The published DGX SuperPOD 1-SU compute fabric must come out of the planner unchanged."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

from clusterforge.loading import load_and_plan

INVENTORY = Path(__file__).parents[2] / "inventory" / "superpod-4su.yaml"


def one_su(tmp_path: Path, reserved: int, max_nodes: int, nodes: int) -> Path:
    text = INVENTORY.read_text()
    text = text.replace("envelope: {max_sus: 4, max_nodes_per_su: 32,",
                        f"envelope: {{max_sus: 1, max_nodes_per_su: {max_nodes},")
    dropped = ("  - {id: 2", "  - {id: 3", "  - {id: 4", "teams:", "  - {name: ")  # teams: quotas of 4 SUs
    lines = [line for line in text.splitlines() if not line.startswith(dropped)]
    text = "\n".join(lines).replace("{id: 1, server_model: dgx-h100, nodes: 32,",
                                    f"{{id: 1, server_model: dgx-h100, nodes: {nodes},")
    text = text.replace("oversubscription: 1.0}\n  storage",
                        f"oversubscription: 1.0, reserved_leaf_ports: {reserved}}}\n  storage")
    shutil.copytree(INVENTORY.parent / "catalog", tmp_path / "catalog", dirs_exist_ok=True)
    path = tmp_path / "su1.yaml"
    path.write_text(text)
    return path


def test_published_one_su_counts(tmp_path: Path):
    """31 nodes + one reserved UFM port per leaf: 8 leaves, 4 spines, 256 leaf-spine links, 248 node links."""
    _, plan, _ = load_and_plan(one_su(tmp_path, reserved=1, max_nodes=31, nodes=31))
    data = plan.fabric["data"]
    assert (data.leaves, data.spines, data.cores, data.tiers) == (8, 4, 0, 2)
    tiers = Counter(link.tier for link in plan.links if link.plane == "data")
    assert tiers["data-leaf-spine"] == 256
    assert tiers["node-leaf"] == 31 * 8
    assert data.oversubscription == {"leaf": 1.0}
    # every rail-k NIC lands on the rail-k leaf
    for link in plan.links:
        if link.tier == "node-leaf" and link.plane == "data":
            rail = int(link.a.port.removeprefix("rail"))
            assert link.b.device == f"su01-leaf-rail{rail}"


def test_full_su_without_reservation_also_needs_four_spines(tmp_path: Path):
    _, plan, _ = load_and_plan(one_su(tmp_path, reserved=0, max_nodes=32, nodes=32))
    assert (plan.fabric["data"].leaves, plan.fabric["data"].spines) == (8, 4)


def test_four_su_superpod_is_two_tier_with_sixteen_spines():
    _, plan, _ = load_and_plan(INVENTORY)
    data = plan.fabric["data"]
    assert (data.leaves, data.spines, data.tiers) == (32, 16, 2)
    assert Counter(link.tier for link in plan.links)["data-leaf-spine"] == 32 * 32
