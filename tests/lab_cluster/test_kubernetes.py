"""The lab's Kubernetes layer for real: a control plane on ctl-01 (etcd, kube-apiserver, controller-manager,
scheduler; TLS, RBAC, no anonymous access), the GPU servers as nodes with SIMULATED KUBELETS (kwok) and
their planned GPU counts, and k8s_gpu applied: the DaemonSet placed by the real DaemonSet controller, the
quotas enforced by the real API server. One control plane per session (the kube_cluster fixture)."""

from __future__ import annotations

import ssl
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab]

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import AppsV1Api, CoreV1Api, NodeV1Api, V1Pod  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402


def _plan():
    from clusterforge.loading import load_and_plan

    return load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")


SPEC, PLAN = _plan()[:2]
GPU_NODES = {d.name: d.gpus for d in PLAN.devices if d.kind == "server" and d.gpus}
CONTROL = next(d for d in PLAN.devices if d.kind == "control")
TEAMS = {t.name: t.gpus for t in SPEC.teams}


def _eventually(check, timeout_s: float = 60.0):
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(1)


def _gpu_pod(name: str, gpus: int) -> V1Pod:
    return kubernetes.client.V1Pod(
        metadata=kubernetes.client.V1ObjectMeta(name=name),
        spec=kubernetes.client.V1PodSpec(
            runtime_class_name="nvidia", restart_policy="Never",
            containers=[kubernetes.client.V1Container(
                name="cuda", image="nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                resources=kubernetes.client.V1ResourceRequirements(
                    requests={"nvidia.com/gpu": str(gpus)}, limits={"nvidia.com/gpu": str(gpus)}))]))


def test_second_run_changes_nothing(kube_cluster):
    assert kube_cluster.second.ok
    assert kube_cluster.second.changed_per_host == {CONTROL.name: 0}, kube_cluster.second.changed_per_host


def test_anonymous_requests_are_refused():
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"https://{CONTROL.management_ip}:6443/api/v1/nodes", context=context, timeout=10)
    assert refused.value.code == 401


@pytest.mark.parametrize("node", sorted(GPU_NODES))
def test_gpu_server_is_a_ready_node_with_its_planned_gpus(kube_cluster, node):
    core = CoreV1Api(kube_cluster.api)

    def ready():
        got = core.read_node(node)
        conditions = {c.type: c.status for c in got.status.conditions or []}
        return got if conditions.get("Ready") == "True" else None

    got = _eventually(ready)
    assert got is not None, f"{node} is not Ready"
    assert got.status.capacity["nvidia.com/gpu"] == str(GPU_NODES[node])
    assert got.metadata.labels["clusterforge.io/kubelet"] == "simulated"
    assert got.metadata.labels["nvidia.com/gpu.present"] == "true"
    assert {(t.key, t.effect) for t in got.spec.taints or []} == {("nvidia.com/gpu", "NoSchedule")}


def test_runtime_class_nvidia_exists(kube_cluster):
    assert NodeV1Api(kube_cluster.api).read_runtime_class("nvidia").handler == "nvidia"


def test_device_plugin_runs_on_exactly_the_gpu_nodes(kube_cluster):
    apps, core = AppsV1Api(kube_cluster.api), CoreV1Api(kube_cluster.api)

    def rolled_out():
        ds = apps.read_namespaced_daemon_set("nvidia-device-plugin-daemonset", "kube-system").status
        return ds if ds.desired_number_scheduled == ds.number_ready == len(GPU_NODES) else None

    status = _eventually(rolled_out, 90)
    assert status is not None, "the device-plugin DaemonSet did not roll out on every GPU node"
    pods = core.list_namespaced_pod("kube-system", label_selector="name=nvidia-device-plugin-ds").items
    assert sorted(p.spec.node_name for p in pods) == sorted(GPU_NODES)


@pytest.mark.parametrize("team", sorted(TEAMS))
def test_team_quota_is_the_declared_one(kube_cluster, team):
    quota = CoreV1Api(kube_cluster.api).read_namespaced_resource_quota("gpu-quota", team)
    assert quota.spec.hard["requests.nvidia.com/gpu"] == str(TEAMS[team])


def test_pod_over_the_team_quota_is_refused_by_the_api_server(kube_cluster):
    team, quota = min(TEAMS.items(), key=lambda item: item[1])
    with pytest.raises(ApiException) as refused:
        CoreV1Api(kube_cluster.api).create_namespaced_pod(team, _gpu_pod("over-quota", quota + 1))
    assert refused.value.status == 403 and "exceeded quota" in refused.value.body


def test_pod_within_quota_is_scheduled_onto_a_gpu_node(kube_cluster):
    core = CoreV1Api(kube_cluster.api)
    team = max(TEAMS, key=TEAMS.get)
    core.create_namespaced_pod(team, _gpu_pod("within-quota", 1))
    try:
        bound = _eventually(lambda: core.read_namespaced_pod("within-quota", team).spec.node_name, 60)
        assert bound in GPU_NODES
    finally:
        core.delete_namespaced_pod("within-quota", team, grace_period_seconds=0)
