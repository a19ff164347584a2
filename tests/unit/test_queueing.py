"""plan/queueing.py: Kueue's flavors, topology levels and team queues from the plan, and the quota ceilings the
k8s_gpu role takes with Kueue on. (tests/kube checks the rendered objects against Kueue's CRDs and runs Kueue.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.plan.kubernetes import KubeNode
from clusterforge.plan.queueing import (
    GPU_MODEL_LABEL,
    HOSTNAME_LABEL,
    TeamLimits,
    flavor_name,
    plan_queueing,
    split,
)
from clusterforge.plan.topology import LABEL_PREFIX

ROOT = Path(__file__).resolve().parents[2]


def _plan(name: str):
    return load_and_plan(ROOT / "inventory" / f"{name}.yaml")[1]


def _node(name: str, model: str, gpus: int, rack: str = "su01-r01", domain: str | None = None) -> KubeNode:
    labels = {LABEL_PREFIX + "su": "1", LABEL_PREFIX + "rack": rack, LABEL_PREFIX + "leaf-group": "su01-leafgroup1",
              LABEL_PREFIX + "nvlink-domain": domain or name}
    return KubeNode(name, "192.0.2.1", "10.244.0.0/24", "02:cf:0a:f4:00:00", gpus, model, tuple(sorted(labels.items())))


def _quotas(plan) -> dict[str, list[tuple[str, int, int, int]]]:
    return {q.team: [(f.flavor, f.nominal_gpus, f.borrowing_limit_gpus, f.lending_limit_gpus) for f in q.quotas]
            for q in plan.queues}


def test_the_lab_queues_each_team_at_its_declared_gpus():
    plan = _plan("lab")
    assert plan.queueing is not None
    assert _quotas(plan.queueing) == {"research": [("h200", 6, 2, 6)], "inference": [("h200", 2, 6, 2)]}
    assert plan.queueing.cohort == "lab" and dict(plan.queueing.cohort_gpus) == {"h200": 0}
    assert [f.to_dict()["node_labels"] for f in plan.queueing.flavors] == [{GPU_MODEL_LABEL: "H200"}]


def test_the_lab_topology_runs_su_leaf_group_rack_host():
    assert _plan("lab").queueing.levels == (LABEL_PREFIX + "su", LABEL_PREFIX + "leaf-group", LABEL_PREFIX + "rack",
                                            HOSTNAME_LABEL)


def test_a_rack_scale_topology_has_the_nvlink_domain_in_place_of_the_rack():
    levels = _plan("gb200-nvl72-su").queueing.levels
    assert LABEL_PREFIX + "nvlink-domain" in levels and LABEL_PREFIX + "rack" not in levels
    assert levels[-1] == HOSTNAME_LABEL


def test_every_level_is_a_label_every_gpu_node_carries():
    plan = _plan("superpod-4su")
    for level in plan.queueing.levels[:-1]:
        assert all(level in dict(n.labels) for n in plan.kubernetes.nodes), level


def test_the_levels_do_not_follow_the_number_of_racks_or_sus():
    """Kueue refuses a change to a Topology's levels: growing the cluster must keep them."""
    one = [_node("a", "H200", 8, "su01-r01")]
    many = [_node(f"n{i}", "H200", 8, f"su01-r0{i}") for i in range(1, 5)]
    teams = [TeamLimits("t", 8)]
    assert plan_queueing("c", one, teams).levels == plan_queueing("c", many, teams).levels


def test_gpus_no_team_is_given_are_the_cohorts_and_borrowable_by_default():
    nodes = [_node("a", "H200", 8), _node("b", "H200", 8)]
    plan = plan_queueing("c", nodes, [TeamLimits("x", 4), TeamLimits("y", 2)])
    assert dict(plan.cohort_gpus) == {"h200": 10}
    assert _quotas(plan) == {"x": [("h200", 4, 12, 4)], "y": [("h200", 2, 14, 2)]}
    assert [q.ceiling_gpus for q in plan.queues] == [16, 16]


def test_declared_limits_are_written_as_declared():
    nodes = [_node("a", "H200", 8)]
    plan = plan_queueing("c", nodes, [TeamLimits("x", 6, borrowing_limit_gpus=1, lending_limit_gpus=0),
                                      TeamLimits("y", 2)])
    assert _quotas(plan) == {"x": [("h200", 6, 1, 0)], "y": [("h200", 2, 0, 2)]}
    assert plan.to_dict()["quota_ceilings"] == [{"name": "x", "gpus": 7}, {"name": "y", "gpus": 2}]


def test_several_gpu_models_split_a_team_in_proportion():
    nodes = [_node("a", "H100-SXM5-80GB", 8), _node("b", "H100-SXM5-80GB", 8), _node("c", "B200", 8)]
    plan = plan_queueing("c", nodes, [TeamLimits("x", 10)])
    assert [f.name for f in plan.flavors] == ["b200", "h100-sxm5-80gb"]
    assert [(q.flavor, q.nominal_gpus) for q in plan.queues[0].quotas] == [("b200", 3), ("h100-sxm5-80gb", 7)]
    assert plan.queues[0].nominal_gpus == 10


@pytest.mark.parametrize(("total", "weights", "shares"), [
    (10, [8, 16], [3, 7]), (1, [1, 1], [1, 0]), (0, [5, 5], [0, 0]), (7, [0, 0], [7, 0]), (9, [1, 1, 1], [3, 3, 3]),
])
def test_split_sums_to_the_total(total, weights, shares):
    assert split(total, weights) == shares and sum(shares) == total


@pytest.mark.parametrize(("model", "name"), [("H200-SXM5-141GB", "h200-sxm5-141gb"), ("GB200", "gb200"),
                                             ("RTX PRO 6000", "rtx-pro-6000"), ("--", "gpu")])
def test_a_flavor_is_named_as_a_dns_label(model, name):
    assert flavor_name(model) == name


def test_nothing_to_queue_without_teams_or_gpu_nodes():
    assert plan_queueing("c", [_node("a", "H200", 8)], []) is None
    assert plan_queueing("c", [], [TeamLimits("x", 1)]) is None
