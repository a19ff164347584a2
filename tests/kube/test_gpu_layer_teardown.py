"""`destroy` off the lab removes what `up` applied to the API server, against a real kube-apiserver on loopback.

The k8s_gpu role applies the layer for real (ansible-playbook, local connection, kubectl from the k8s build
cache, the lab declaration's GPU nodes and teams, time-slicing on so the ConfigMap is applied too); then
KubeGpuLayer's delete (what the engine calls on `destroy`, with the state create recorded) removes it. Things the
role did not create stay: another RuntimeClass and namespace, a team namespace that is not marked as
clusterforge's (it loses only its quota), the nodes' other labels and taints, the nodes themselves. A second
delete removes nothing; a server that does not answer is one line naming it.
"""

from __future__ import annotations

import json
import time

import pytest
import yaml

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import AppsV1Api, CoreV1Api, NodeV1Api  # noqa: E402
from layer_helpers import FOREIGN_LABEL, FOREIGN_TAINT, apply_layer, ensure_nodes, gone, lab_kube_vars  # noqa: E402

from clusterforge.pulumi.kube.gpu_layer import GpuLayer, planned_layer, role_defaults  # noqa: E402
from clusterforge.pulumi.kube.teardown import TeardownFailed, api_client  # noqa: E402
from clusterforge.pulumi.providers.kube_gpu_layer import KubeGpuLayerProvider  # noqa: E402

TIME_SLICING = 2


def _eventually(check, timeout_s: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def _said(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("kubernetes ")]


@pytest.fixture(scope="module")
def applied(loopback_api, tmp_path_factory):
    """The layer applied by the role, plus objects the role never created."""
    kube_vars = lab_kube_vars()
    api = api_client(loopback_api.kubeconfig)
    core, node_api = CoreV1Api(api), NodeV1Api(api)
    ensure_nodes(api, kube_vars)
    core.create_namespace(kubernetes.client.V1Namespace(metadata=kubernetes.client.V1ObjectMeta(name="keep-me")))
    node_api.create_runtime_class(kubernetes.client.V1RuntimeClass(
        metadata=kubernetes.client.V1ObjectMeta(name="other-runtime"), handler="runc"))
    apply_layer(loopback_api, tmp_path_factory.mktemp("apply"), kube_vars, TIME_SLICING)
    # a team namespace clusterforge does not own (its mark taken off, as by an admin adopting it), with a
    # ConfigMap of its own: it must stay, losing only the quota the role put in it
    foreign_team = kube_vars["teams"][-1]["name"]
    core.patch_namespace(foreign_team, {"metadata": {"labels": {"app.kubernetes.io/managed-by": None}}})
    core.create_namespaced_config_map(foreign_team, kubernetes.client.V1ConfigMap(
        metadata=kubernetes.client.V1ObjectMeta(name="theirs"), data={"a": "b"}))
    layer = planned_layer(kube_vars, {**role_defaults(), "k8s_gpu_time_slicing_replicas": TIME_SLICING})
    return kube_vars, layer, foreign_team, api


def test_the_role_applied_what_the_record_names(applied):
    kube_vars, layer, _, api = applied
    core = CoreV1Api(api)
    assert layer.configmap and layer.runtime_class and len(layer.teams) >= 2 and layer.nodes
    AppsV1Api(api).read_namespaced_daemon_set(layer.daemonset, layer.namespace)
    core.read_namespaced_config_map(layer.configmap, layer.namespace)
    NodeV1Api(api).read_runtime_class(layer.runtime_class)
    for team in layer.teams:
        core.read_namespaced_resource_quota("gpu-quota", team)
    node = core.read_node(layer.nodes[0])
    assert set(layer.labels) <= set(node.metadata.labels)
    assert {(t.key, t.value, t.effect) for t in node.spec.taints} >= set(layer.taints)


def test_destroy_removes_the_layer_and_only_it_then_does_nothing(applied, loopback_api, capsys):
    kube_vars, layer, foreign_team, api = applied
    test_the_role_applied_what_the_record_names(applied)  # in whatever order the tests run: applied first
    provider = KubeGpuLayerProvider()
    created = provider.create({"cluster": "loopback", "api_server": loopback_api.server, "planned": layer.to_dict(),
                               "kubeconfig": yaml.safe_dump(loopback_api.kubeconfig), "applied": None})
    apps, core, node_api = AppsV1Api(api), CoreV1Api(api), NodeV1Api(api)
    # every taint the nodes had (ours, the foreign one, the API server's own node.kubernetes.io/not-ready)
    taints = {name: [(t.key, t.value, t.effect) for t in core.read_node(name).spec.taints] for name in layer.nodes}
    capsys.readouterr()
    provider.delete(created.id, created.outs)  # what `destroy` calls with the state
    said = _said(capsys)
    ours = [t for t in layer.teams if t != foreign_team]
    expected = {f"deleted DaemonSet {layer.namespace}/{layer.daemonset}",
                f"deleted ConfigMap {layer.namespace}/{layer.configmap}", f"deleted RuntimeClass {layer.runtime_class}",
                f"deleted ResourceQuota {foreign_team}/gpu-quota",
                *(f"deleted Namespace {t} (and its ResourceQuota gpu-quota)" for t in ours)}
    lines = {line.split(": ", 1)[1] for line in said}
    assert expected <= lines, said
    assert f"kept Namespace {foreign_team}" in " ".join(said), said
    assert sum("node " in line and "removed label" in line for line in said) == len(layer.nodes), said
    assert said[-1].endswith(f"({len(expected) + len(layer.nodes)} change(s) by this run)"), said
    assert all(loopback_api.server in line for line in said)

    assert gone(apps.read_namespaced_daemon_set, layer.daemonset, layer.namespace)
    assert gone(core.read_namespaced_config_map, layer.configmap, layer.namespace)
    assert gone(node_api.read_runtime_class, layer.runtime_class)
    assert gone(core.read_namespaced_resource_quota, "gpu-quota", foreign_team)
    assert _eventually(lambda: all(gone(core.read_namespace, t) for t in ours)), "team namespaces not finalized"
    core.read_namespace(foreign_team)
    core.read_namespaced_config_map("theirs", foreign_team)
    core.read_namespace("keep-me")
    node_api.read_runtime_class("other-runtime")
    for name in layer.nodes:
        node = core.read_node(name)
        assert node.metadata.labels.get(FOREIGN_LABEL[0]) == FOREIGN_LABEL[1]
        assert not set(layer.labels) & set(node.metadata.labels), node.metadata.labels
        left = [(t.key, t.value, t.effect) for t in node.spec.taints]
        assert tuple(FOREIGN_TAINT.values()) in left
        assert left == [t for t in taints[name] if t not in layer.taints] != taints[name], (left, taints[name])

    provider.delete(created.id, created.outs)  # a second destroy (or one after a failed one) carries on: nothing
    again = _said(capsys)
    assert again[-1].endswith("(0 change(s) by this run)"), again
    assert [line.split(": ", 1)[1].split(" ", 1)[0] for line in again[:-1]] == ["kept"], again


def test_a_server_that_does_not_answer_is_one_line_naming_it(loopback_api):
    from loopback_api import free_port

    server = f"https://127.0.0.1:{free_port()}"  # nothing listens there
    config = json.loads(json.dumps(loopback_api.kubeconfig))
    config["clusters"][0]["cluster"]["server"] = server
    layer = GpuLayer("kube-system", "nvidia", "nvidia-device-plugin-daemonset", None, ("team-a",), ("n1",),
                     ("nvidia.com/gpu.present",), (("nvidia.com/gpu", "present", "NoSchedule"),))
    props = {"cluster": "c", "api_server": server, "planned": layer.to_dict(), "applied": layer.to_dict(),
             "kubeconfig": yaml.safe_dump(config)}
    started = time.monotonic()
    with pytest.raises(TeardownFailed) as failed:
        KubeGpuLayerProvider().delete("kube-gpu-layer-c", props)
    message = str(failed.value)
    assert "\n" not in message and server in message and "cannot be reached" in message, message
    assert time.monotonic() - started < 30
