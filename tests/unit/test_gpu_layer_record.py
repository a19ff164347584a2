"""The record of what k8s_gpu applies (pulumi/kube/gpu_layer.py) and KubeGpuLayer's bookkeeping of it.

The names are the role's (its defaults and templates), every object `destroy` deletes is rendered with the mark
it checks, a team or node dropped from the declaration stays recorded (kubectl apply never pruned it), and an
unchanged declaration is no change (a second `up` changes nothing)."""

from __future__ import annotations

from pathlib import Path

from clusterforge.pulumi.kube.gpu_layer import (
    CONFIGMAP_NAME,
    DAEMONSET_NAME,
    MANAGED_BY,
    NODE_FACT_LABELS,
    QUOTA_NAME,
    GpuLayer,
    merged,
    planned_layer,
    role_defaults,
)
from clusterforge.pulumi.providers.kube_gpu_layer import KubeGpuLayerProvider

TEMPLATES = Path(__file__).resolve().parents[2] / "roles" / "k8s_gpu" / "templates"
KUBE_VARS = {"control_nodes": [{"name": "ctl-01", "ip": "10.0.0.12"}],
             "gpu_nodes": [{"name": "gpu01", "gpu_model": "H200", "gpu_count": 8},
                           {"name": "gpu02", "gpu_model": "H200", "gpu_count": 8}],
             "teams": [{"name": "research", "gpus": 8}, {"name": "inference", "gpus": 4}]}


def test_the_record_takes_the_roles_names_and_the_plans_nodes_and_teams():
    defaults = role_defaults()
    layer = planned_layer(KUBE_VARS, defaults)
    assert layer.namespace == defaults["k8s_gpu_namespace"] and layer.runtime_class == "nvidia"
    assert layer.configmap is None  # the default is no time-slicing: the role renders no ConfigMap
    assert planned_layer(KUBE_VARS, {**defaults, "k8s_gpu_time_slicing_replicas": 4}).configmap == CONFIGMAP_NAME
    gpu_operator = planned_layer(KUBE_VARS, {**defaults, "k8s_gpu_mode": "gpu-operator"})
    assert gpu_operator.runtime_class is None and gpu_operator.configmap is None
    assert layer.teams == ("research", "inference") and layer.nodes == ("gpu01", "gpu02")
    assert set(layer.labels) == {*defaults["k8s_gpu_node_labels"], *NODE_FACT_LABELS}
    assert layer.taints == tuple((t["key"], t["value"], t["effect"]) for t in defaults["k8s_gpu_node_taints"])
    assert GpuLayer.from_dict(layer.to_dict()) == layer


def test_every_object_destroy_deletes_is_rendered_with_its_name_and_the_mark():
    mark = f"{MANAGED_BY[0]}: {MANAGED_BY[1]}"
    for template, name in (("device-plugin-daemonset.yaml.j2", DAEMONSET_NAME),
                           ("time-slicing-configmap.yaml.j2", CONFIGMAP_NAME),
                           ("team-quotas.yaml.j2", QUOTA_NAME),
                           ("runtimeclass.yaml.j2", "{{ k8s_gpu_runtime_class_name }}")):
        text = (TEMPLATES / template).read_text()
        assert f"name: {name}\n" in text, template
        assert text.count(mark) >= (2 if template == "team-quotas.yaml.j2" else 1), template  # + the Namespace
    assert "name: {{ team['name'] }}" in (TEMPLATES / "team-quotas.yaml.j2").read_text()


def test_what_an_earlier_up_applied_stays_recorded():
    old = planned_layer(KUBE_VARS, role_defaults())
    new = planned_layer({**KUBE_VARS, "teams": KUBE_VARS["teams"][:1], "gpu_nodes": KUBE_VARS["gpu_nodes"][1:]},
                        role_defaults())
    both = merged(old, new)
    assert both.teams == ("research", "inference") and both.nodes == ("gpu02", "gpu01")
    assert merged(both, new) == both


def test_the_provider_keeps_the_union_and_an_unchanged_declaration_is_no_change():
    provider = KubeGpuLayerProvider()
    first = planned_layer(KUBE_VARS, role_defaults()).to_dict()
    props = {"cluster": "c", "api_server": "https://10.0.0.12:6443", "planned": first, "kubeconfig": "k"}
    created = provider.create(props)
    assert created.id == "kube-gpu-layer-c" and created.outs["applied"] == first
    assert not provider.diff(created.id, created.outs, props).changes
    fewer = planned_layer({**KUBE_VARS, "teams": KUBE_VARS["teams"][:1]}, role_defaults()).to_dict()
    news = {**props, "planned": fewer}
    assert provider.diff(created.id, created.outs, news).changes
    updated = provider.update(created.id, created.outs, news).outs
    assert updated["planned"] == fewer and updated["applied"]["teams"] == ["research", "inference"]
    assert not provider.diff(created.id, updated, news).changes  # the next `up` with the same declaration
