"""Quotas that count DRA claims, the pure parts (plan/dra.py, render/ansible_inventory.py, roles/k8s_kueue's
configuration template): every planned DeviceClass is counted by Kueue as nvidia.com/gpu, within what Kueue
v0.17's configuration validation accepts, and each team's per-class device quota adds up to its GPU quota."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2
import pytest
import yaml
from dra_claims import role_team_quotas

from clusterforge.loading import load_and_plan
from clusterforge.plan.dra import (
    KUEUE_MAX_CLASSES,
    kueue_device_class_mappings,
    kueue_mapping_problem,
    plan_device_classes,
    team_device_quotas,
)
from clusterforge.plan.kubernetes import KubeNode
from clusterforge.plan.queueing import TeamLimits, plan_queueing
from clusterforge.render.ansible_inventory import kubernetes_vars
from clusterforge.verify.kube_checks import quota_keys, team_quotas

REPO = Path(__file__).resolve().parents[2]
# Kueue v0.17 validates each mapped class name with content.IsLabelKey (k8s IsQualifiedName): unprefixed, a name
# part of at most 63 characters, alphanumeric at both ends, [-A-Za-z0-9_.] between
LABEL_KEY_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def _node(name: str, model: str, gpus: int) -> KubeNode:
    return KubeNode(name, "198.18.8.16", "198.18.128.0/24", "02:cf:c6:12:80:00", gpus, model, ())


def test_every_class_is_mapped_to_nvidia_gpu_once():
    classes = plan_device_classes([_node("a", "H200-SXM5-141GB", 8), _node("b", "B200", 8),
                                   _node("c", "H200-SXM5-141GB", 4)])
    assert kueue_device_class_mappings(classes) == [
        {"name": "nvidia.com/gpu",
         "deviceClassNames": ["b200.gpu.clusterforge.io", "h200-sxm5-141gb.gpu.clusterforge.io"]}]
    assert kueue_device_class_mappings(()) == []


def test_a_class_name_is_a_label_key_kueue_accepts_for_the_longest_model():
    longest = "A" * 40 + "-" + "b" * 22  # the GPU model grammar's 63 characters, a '-' where the cut falls
    (cls,) = plan_device_classes([_node("a", longest, 8)])
    assert len(cls.name) <= 63 and LABEL_KEY_NAME.match(cls.name), cls.name
    assert cls.name.endswith(".gpu.clusterforge.io") and "-." not in cls.name
    (short,) = plan_device_classes([_node("a", "H200", 2)])
    assert short.name == "h200.gpu.clusterforge.io"  # a short model keeps the flavor's name


def test_more_classes_than_kueue_maps_to_one_resource_are_refused():
    classes = plan_device_classes([_node(f"n{i}", f"GPU{i}", 8) for i in range(KUEUE_MAX_CLASSES + 1)])
    assert kueue_mapping_problem(classes[:KUEUE_MAX_CLASSES]) is None
    problem = kueue_mapping_problem(classes)
    assert problem is not None and "at most 8" in problem


def test_team_device_quotas_split_a_team_over_the_models_as_kueue_does():
    nodes = [_node("a", "H200", 8), _node("b", "H200", 8), _node("c", "B200", 8)]
    queueing = plan_queueing("x", nodes, [TeamLimits("t", 10, borrowing_limit_gpus=3), TeamLimits("u", 4)])
    assert queueing is not None
    classes = plan_device_classes(nodes)
    for queue in queueing.queues:
        nominal = team_device_quotas(classes, queueing, queue.team, ceiling=False)
        ceiling = team_device_quotas(classes, queueing, queue.team, ceiling=True)
        assert set(nominal) == set(ceiling) == {c.name for c in classes}
        assert sum(nominal.values()) == queue.nominal_gpus
        assert sum(ceiling.values()) == queue.ceiling_gpus
        by_flavor = {q.flavor: q for q in queue.quotas}
        assert nominal["h200.gpu.clusterforge.io"] == by_flavor["h200"].nominal_gpus
        assert ceiling["b200.gpu.clusterforge.io"] == (by_flavor["b200"].nominal_gpus
                                                       + by_flavor["b200"].borrowing_limit_gpus)


def test_the_lab_inventory_carries_the_mapping_and_each_team_s_device_quota():
    _, plan, _ = load_and_plan(REPO / "inventory" / "lab.yaml")
    kube = kubernetes_vars(plan)
    names = [c["name"] for c in kube["gpu_device_classes"]]
    assert kube["queueing"]["device_class_mappings"] == [{"name": "nvidia.com/gpu", "deviceClassNames": names}]
    for team in kube["teams"] + kube["queueing"]["quota_ceilings"]:
        assert set(team["dra_devices"]) == set(names) and sum(team["dra_devices"].values()) == team["gpus"]


@pytest.mark.parametrize("kueue", [True, False])
def test_verify_expects_the_quota_keys_and_values_the_role_sets(kueue):
    """`verify` in DRA mode checks each team's quota key by key against what roles/k8s_gpu's template renders from
    the same inventory: the GPU key and one devices key per DeviceClass, with the same values (Kueue on: the
    ceilings and their per-class split; off: the declared GPUs, each class defaulting to all of them)."""
    _, plan, _ = load_and_plan(REPO / "inventory" / "lab.yaml")
    kube = kubernetes_vars(plan)
    if not kueue:
        kube.pop("queueing")
        for team in kube["teams"]:
            team.pop("dra_devices", None)
    classes = kube["gpu_device_classes"]
    teams = team_quotas(kube)
    assert teams
    rendered = {d["metadata"]["namespace"]: d["spec"]["hard"]
                for d in role_team_quotas(teams, classes) if d["kind"] == "ResourceQuota"}
    for team in teams:
        expected = quota_keys(team, [c["name"] for c in classes])
        assert len(expected) == 1 + len(classes)
        assert {k: str(v) for k, v in rendered[team["name"]].items()} == expected, team


def _kueue_config(**values) -> dict:
    role = REPO / "roles" / "k8s_kueue"
    defaults = yaml.safe_load((role / "defaults" / "main.yml").read_text())
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    env.filters["to_json"] = json.dumps
    return yaml.safe_load(env.from_string((role / "templates" / "kueue-config.yaml.j2").read_text())
                          .render(**(defaults | values)))


@pytest.mark.parametrize("mappings", [[], [{"name": "nvidia.com/gpu",
                                              "deviceClassNames": ["h200.gpu.clusterforge.io"]}]])
def test_the_kueue_configuration_turns_the_gate_on_with_a_mapping_only(mappings):
    config = _kueue_config(k8s_kueue_device_class_mappings=mappings)
    assert config["resources"].get("deviceClassMappings", []) == mappings
    assert config["featureGates"].get("DynamicResourceAllocation", False) is bool(mappings)
    assert config["featureGates"]["VisibilityOnDemand"] is False
