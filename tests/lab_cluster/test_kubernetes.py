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


def test_anonymous_requests_are_refused(kube_cluster):  # the fixture: the control plane is up
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


def _deployment(team: str) -> object:
    m = kubernetes.client
    labels = {"app": "trainer"}
    pod = m.V1PodSpec(
        runtime_class_name="nvidia",
        containers=[m.V1Container(name="train", image="nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                                  resources=m.V1ResourceRequirements(requests={"nvidia.com/gpu": "1"},
                                                                     limits={"nvidia.com/gpu": "1"}))])
    return m.V1Deployment(metadata=m.V1ObjectMeta(name="trainer", namespace=team),
                          spec=m.V1DeploymentSpec(replicas=1, selector=m.V1LabelSelector(match_labels=labels),
                                                  template=m.V1PodTemplateSpec(metadata=m.V1ObjectMeta(labels=labels),
                                                                               spec=pod)))


def _trainer_node(core, team: str, not_on: str | None = None) -> str | None:
    pods = core.list_namespaced_pod(team, label_selector="app=trainer").items
    nodes = [p.spec.node_name for p in pods if p.spec.node_name and not p.metadata.deletion_timestamp]
    return nodes[0] if len(nodes) == 1 and nodes[0] != not_on else None


@pytest.fixture
def trainer(kube_cluster):
    """A one-replica GPU Deployment in the largest team, bound to a node; removed afterwards."""
    team = max(TEAMS, key=TEAMS.get)
    apps, core = AppsV1Api(kube_cluster.api), CoreV1Api(kube_cluster.api)
    apps.create_namespaced_deployment(team, _deployment(team))
    try:
        node = _eventually(lambda: _trainer_node(core, team), 60)
        assert node in GPU_NODES, f"the trainer pod was not scheduled ({node})"
        yield team, node
    finally:
        apps.delete_namespaced_deployment("trainer", team)
        kubernetes.client.PolicyV1Api(kube_cluster.api).delete_collection_namespaced_pod_disruption_budget(team)
        for name in GPU_NODES:
            core.patch_node(name, {"spec": {"unschedulable": None}})


def test_drain_evicts_the_pod_which_is_rescheduled_elsewhere_and_uncordon_restores(kube_cluster, trainer):
    from clusterforge.ops.drain import drain, uncordon

    team, node = trainer
    core = CoreV1Api(kube_cluster.api)
    result = drain(core, node, timeout_s=60)
    assert len(result.evicted) == 1 and result.evicted[0].startswith(f"{team}/trainer-")
    assert any(p.startswith("kube-system/nvidia-device-plugin-daemonset-") for p in result.skipped)
    assert core.read_node(node).spec.unschedulable is True
    elsewhere = _eventually(lambda: _trainer_node(core, team, not_on=node), 60)
    assert elsewhere in GPU_NODES and elsewhere != node
    uncordon(core, node)
    assert not core.read_node(node).spec.unschedulable


def test_drain_blocked_by_a_disruption_budget_names_the_pod(kube_cluster, trainer):
    from clusterforge.ops.drain import DrainBlocked, drain

    team, node = trainer
    m = kubernetes.client
    budget = m.V1PodDisruptionBudget(
        metadata=m.V1ObjectMeta(name="trainer"),
        spec=m.V1PodDisruptionBudgetSpec(min_available=1, selector=m.V1LabelSelector(match_labels={"app": "trainer"})))
    kubernetes.client.PolicyV1Api(kube_cluster.api).create_namespaced_pod_disruption_budget(team, budget)
    core = CoreV1Api(kube_cluster.api)
    with pytest.raises(DrainBlocked) as blocked:
        drain(core, node, timeout_s=15)
    (pod,) = blocked.value.blocked
    assert pod.startswith(f"{team}/trainer-") and "disruption budget" in blocked.value.blocked[pod]
    assert _trainer_node(core, team) == node, "a blocked eviction must leave the pod running"
