"""The up-down reachability check finds a partitioned fabric that every other check accepts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fabric_examples import example

from clusterforge.plan.fabric_checks import check_fabric
from clusterforge.plan.fabric_reach import unreachable_pairs

REPO = Path(__file__).resolve().parents[2]


def _without(plan, keep):
    return dataclasses.replace(plan, links=tuple(link for link in plan.links if keep(link)))


def test_examples_are_reachable():
    for name in ("lab", "roce-128gpu", "superpod-4su"):
        assert unreachable_pairs(example(name)[1]) == []


def test_leaves_under_disjoint_spines_are_reported():
    _, plan, _ = example("roce-128gpu")
    leaves = sorted({link.a.device for link in plan.links if link.tier == "data-leaf-spine"})
    spines = sorted({link.b.device for link in plan.links if link.tier == "data-leaf-spine"})
    assert len(leaves) >= 2 and len(spines) >= 2
    first = leaves[0]

    def keep(link):  # the first leaf keeps only spine 1, every other leaf only spine 2
        if link.tier != "data-leaf-spine":
            return True
        return link.b.device == (spines[0] if link.a.device == first else spines[1])

    cut = _without(plan, keep)
    problems = unreachable_pairs(cut)
    assert len(problems) == 1 and problems[0].startswith("data plane:") and "partitioned" in problems[0]
    assert any("partitioned" in p for p in check_fabric(cut))


def test_a_bond_reaches_through_either_member():
    _, plan, _ = example("roce-128gpu")
    # storage bonds: drop each node's second member link; every bond still reaches the spines via leaf 1
    cut = _without(plan, lambda link: not (link.plane == "storage" and link.tier == "node-leaf"
                                           and link.a.port.endswith("1")))
    assert unreachable_pairs(cut) == []


def test_aggregation_pairs_without_their_core_are_islands():
    from clusterforge.model import load_cluster
    from clusterforge.model.scale import scaled
    from clusterforge.plan import plan_cluster
    from clusterforge.vocab import LinkTier

    plan = plan_cluster(scaled(load_cluster(REPO / "inventory" / "lab.yaml")[0], 64))
    assert any(link.tier == LinkTier.AGG_CORE for link in plan.links)
    assert unreachable_pairs(plan) == []
    islands = unreachable_pairs(_without(plan, lambda link: link.tier != LinkTier.AGG_CORE))
    assert {p.split(":")[0] for p in islands} == {"management plane", "oob plane"}
