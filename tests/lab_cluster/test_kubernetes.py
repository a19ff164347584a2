"""The lab's Kubernetes for real: a control plane on ctl-01 (etcd, kube-apiserver, controller-manager,
scheduler; TLS, RBAC, no anonymous access), the cluster registry beside it, and every GPU server a node with
Debian's containerd and runc and the pinned kubelet and kube-proxy, joined by TLS bootstrap. Only the GPUs are
SIMULATED (cf-sim-gpu-plugin through the kubelet's device-plugin API). Pods run real containers pulled from the
cluster registry. One cluster per session (the kube_cluster fixture)."""

from __future__ import annotations

import ssl
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab]

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import AppsV1Api, BatchV1Api, CoreV1Api, NodeV1Api  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402


def _plan():
    from clusterforge.loading import load_and_plan

    return load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")


SPEC, PLAN = _plan()[:2]
GPU_NODES = {d.name: d.gpus for d in PLAN.devices if d.kind == "server" and d.gpus}
CONTROL = next(d for d in PLAN.devices if d.kind == "control")
TEAMS = {t.name: t.gpus for t in SPEC.teams}
# each team's ResourceQuota: its GPUs, or with Kueue on (inventory/lab.yaml's kubernetes.kueue) its ceiling
QUOTAS = ({q.team: q.ceiling_gpus for q in PLAN.queueing.queues} if PLAN.queueing and PLAN.queueing.enabled
          else TEAMS)
IMAGE = f"{CONTROL.management_ip}:5000/clusterforge/cf-gpu-probe:1"


def _eventually(check, timeout_s: float = 60.0):
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(1)


def _container(gpus: int, hold: bool = False):
    m = kubernetes.client
    return m.V1Container(name="probe", image=IMAGE, args=["--hold"] if hold else None,
                         env=[m.V1EnvVar(name="NODE_NAME", value_from=m.V1EnvVarSource(
                             field_ref=m.V1ObjectFieldSelector(field_path="spec.nodeName")))],
                         resources=m.V1ResourceRequirements(requests={"nvidia.com/gpu": str(gpus)},
                                                            limits={"nvidia.com/gpu": str(gpus)}))


def _gpu_pod(name: str, gpus: int):
    m = kubernetes.client
    return m.V1Pod(metadata=m.V1ObjectMeta(name=name),
                   spec=m.V1PodSpec(runtime_class_name="nvidia", restart_policy="Never",
                                    containers=[_container(gpus)]))


def test_second_run_changes_nothing(kube_cluster):
    assert kube_cluster.second.ok, kube_cluster.second.failed_hosts
    assert kube_cluster.second.changed_per_host == {h: 0 for h in [CONTROL.name, *GPU_NODES]}, \
        kube_cluster.second.changed_per_host


def test_anonymous_requests_are_refused(kube_cluster):  # the fixture: the control plane is up
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"https://{CONTROL.management_ip}:6443/api/v1/nodes", context=context, timeout=10)
    assert refused.value.code == 401


@pytest.mark.parametrize("node", sorted(GPU_NODES))
def test_gpu_server_is_a_ready_node_of_a_real_kubelet_with_its_planned_gpus(kube_cluster, node):
    from clusterforge.pulumi.kube.binaries import pinned_versions

    core = CoreV1Api(kube_cluster.api)

    def ready():
        got = core.read_node(node)
        conditions = {c.type: c.status for c in got.status.conditions or []}
        return got if conditions.get("Ready") == "True" and got.status.capacity.get("nvidia.com/gpu") else None

    got = _eventually(ready, 120)
    assert got is not None, f"{node} is not Ready with GPUs"
    assert got.status.node_info.kubelet_version == pinned_versions()["kubelet"]
    assert got.status.node_info.container_runtime_version.startswith("containerd://1.6")
    # the capacity comes from the (simulated) device plugin through the kubelet: no status patch anywhere
    assert got.status.capacity["nvidia.com/gpu"] == str(GPU_NODES[node])
    assert got.metadata.labels["clusterforge.io/gpu-plugin"] == "simulated"
    assert got.metadata.labels["nvidia.com/gpu.present"] == "true"
    planned = next(n for n in PLAN.kubernetes.nodes if n.name == node)
    for key, value in planned.labels:
        assert got.metadata.labels[key] == value
    assert {(t.key, t.effect) for t in got.spec.taints or []} == {("nvidia.com/gpu", "NoSchedule")}
    assert [a.address for a in got.status.addresses if a.type == "InternalIP"] == [planned.address]


def test_runtime_class_nvidia_exists(kube_cluster):
    assert NodeV1Api(kube_cluster.api).read_runtime_class("nvidia").handler == "nvidia"


def test_no_nvidia_plugin_daemonset_in_the_lab(kube_cluster):
    """The lab's nodes run the simulated plugin as a host service; NVIDIA's DaemonSet (an image the lab cannot
    pull) is not deployed there."""
    with pytest.raises(ApiException) as missing:
        AppsV1Api(kube_cluster.api).read_namespaced_daemon_set("nvidia-device-plugin-daemonset", "kube-system")
    assert missing.value.status == 404


def test_a_gpu_job_runs_a_registry_container_that_sees_its_gpu(kube_cluster):
    m = kubernetes.client
    batch, core = BatchV1Api(kube_cluster.api), CoreV1Api(kube_cluster.api)
    team = max(TEAMS, key=TEAMS.get)
    job = m.V1Job(metadata=m.V1ObjectMeta(name="gpu-probe"), spec=m.V1JobSpec(
        backoff_limit=0, ttl_seconds_after_finished=600, template=m.V1PodTemplateSpec(spec=m.V1PodSpec(
            runtime_class_name="nvidia", restart_policy="Never", containers=[_container(1)]))))
    batch.create_namespaced_job(team, job)
    try:
        done = _eventually(lambda: (s := batch.read_namespaced_job_status("gpu-probe", team).status)
                           and (s.succeeded or s.failed) and s, 120)
        pods = core.list_namespaced_pod(team, label_selector="job-name=gpu-probe").items
        log = core.read_namespaced_pod_log(pods[0].metadata.name, team) if pods else ""
        assert done and done.succeeded == 1, f"the job did not succeed: {done}; log: {log}"
        assert "allocated 1 GPU(s): SIM-" in log and "cf-gpu-probe: OK" in log, log
        assert pods[0].spec.node_name in GPU_NODES
        assert f"node {pods[0].spec.node_name}" in log
    finally:
        batch.delete_namespaced_job("gpu-probe", team, propagation_policy="Foreground")


@pytest.fixture
def holder(kube_cluster):
    """A one-GPU pod that keeps running (cf-gpu-probe --hold) on the first GPU node; removed afterwards."""
    m = kubernetes.client
    core = CoreV1Api(kube_cluster.api)
    team = max(TEAMS, key=TEAMS.get)
    node = sorted(GPU_NODES)[0]
    pod = m.V1Pod(metadata=m.V1ObjectMeta(name="holder"), spec=m.V1PodSpec(
        runtime_class_name="nvidia", node_selector={"kubernetes.io/hostname": node}, containers=[_container(1, True)]))
    core.create_namespaced_pod(team, pod)
    try:
        got = _eventually(lambda: (p := core.read_namespaced_pod("holder", team)).status.phase == "Running" and p, 120)
        assert got, "the holder pod did not start"
        yield got
    finally:
        core.delete_namespaced_pod("holder", team, grace_period_seconds=0)


def test_a_pod_is_reached_from_another_node_over_the_overlay(kube_cluster, holder):
    import ipaddress

    planned = next(n for n in PLAN.kubernetes.nodes if n.name == holder.spec.node_name)
    assert ipaddress.ip_address(holder.status.pod_ip) in ipaddress.ip_network(planned.pod_cidr)
    other = sorted(GPU_NODES)[1]
    rc, out, err = kube_cluster.sh(other, f"ping -c 2 -W 2 {holder.status.pod_ip}")
    assert rc == 0, f"{other} -> pod {holder.status.pod_ip} on {planned.name}: {out}{err}"


def test_the_kubernetes_service_answers_through_kube_proxy(kube_cluster):
    node = sorted(GPU_NODES)[0]
    probe = (f"python3 -c \"import socket; socket.create_connection(('{PLAN.kubernetes.service_ip}', 443), 5);"
             f" print('connected')\"")
    rc, out, err = kube_cluster.sh(node, probe)
    assert rc == 0 and "connected" in out, f"{node} -> {PLAN.kubernetes.service_ip}:443: {out}{err}"


@pytest.mark.parametrize("team", sorted(TEAMS))
def test_team_quota_is_the_declared_one(kube_cluster, team):
    quota = CoreV1Api(kube_cluster.api).read_namespaced_resource_quota("gpu-quota", team)
    assert quota.spec.hard["requests.nvidia.com/gpu"] == str(QUOTAS[team])


def test_pod_over_the_team_quota_is_refused_by_the_api_server(kube_cluster):
    team, quota = min(QUOTAS.items(), key=lambda item: item[1])
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
    pod = m.V1PodSpec(runtime_class_name="nvidia", termination_grace_period_seconds=5,
                      containers=[_container(1, hold=True)])
    return m.V1Deployment(metadata=m.V1ObjectMeta(name="trainer", namespace=team),
                          spec=m.V1DeploymentSpec(replicas=1, selector=m.V1LabelSelector(match_labels=labels),
                                                  template=m.V1PodTemplateSpec(metadata=m.V1ObjectMeta(labels=labels),
                                                                               spec=pod)))


def _trainer_node(core, team: str, not_on: str | None = None) -> str | None:
    """The node of the one trainer pod whose container runs and is Ready (a pod not Ready yet could be evicted
    past its disruption budget), or None."""
    pods = [p for p in core.list_namespaced_pod(team, label_selector="app=trainer").items
            if p.spec.node_name and not p.metadata.deletion_timestamp]
    ready = [p.spec.node_name for p in pods if p.status.phase == "Running"
             and {c.type: c.status for c in p.status.conditions or []}.get("Ready") == "True"]
    return ready[0] if len(pods) == 1 and len(ready) == 1 and ready[0] != not_on else None


@pytest.fixture
def trainer(kube_cluster):
    """A one-replica GPU Deployment in the largest team, bound to a node; removed afterwards."""
    team = max(TEAMS, key=TEAMS.get)
    apps, core = AppsV1Api(kube_cluster.api), CoreV1Api(kube_cluster.api)
    apps.create_namespaced_deployment(team, _deployment(team))
    try:
        node = _eventually(lambda: _trainer_node(core, team), 120)
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
    result = drain(core, node, timeout_s=90)
    assert len(result.evicted) == 1 and result.evicted[0].startswith(f"{team}/trainer-")
    assert core.read_node(node).spec.unschedulable is True
    elsewhere = _eventually(lambda: _trainer_node(core, team, not_on=node), 90)
    assert elsewhere in GPU_NODES and elsewhere != node
    # the replacement's container runs on the other node (a real container, not a status)
    running = _eventually(lambda: [p for p in core.list_namespaced_pod(team, label_selector="app=trainer").items
                                   if p.spec.node_name == elsewhere and p.status.phase == "Running"], 90)
    assert running, f"the replacement on {elsewhere} is not running"
    log = core.read_namespaced_pod_log(running[0].metadata.name, team)
    assert "cf-gpu-probe: OK" in log, log
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
