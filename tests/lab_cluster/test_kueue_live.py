"""Kueue on the lab's real cluster (inventory/lab.yaml: kubernetes.kueue): kueue.service on ctl-01 with its Job
webhooks registered with the API server, the plan's ClusterQueues and LocalQueues, and one-GPU Jobs whose pods
are real containers (the probe image from the cluster registry, held running with --hold) on the real kubelets;
only the GPUs are SIMULATED (cf-sim-gpu-plugin).

`cluster GPUs + 1` one-GPU Jobs go to research's LocalQueue: research's own 6 GPUs and the 2 inference lends are
admitted, one Job waits (its Workload's QuotaReserved False). A running Job ends (its container is stopped on its
node: the probe exits 0, the Job completes) and the waiting one is admitted: the time is printed and must be under
two minutes. Then inference submits one Job and reclaims a GPU research borrowed: one of research's Jobs is
preempted. A Job of 2 pods of 2 GPUs that requires one rack (Kueue's topology-aware scheduling) waits while no rack
has 4 GPUs free and then runs on the two nodes of one rack. Every Job of the module is deleted at the end, and its
pods are gone before the next test runs.
Uses the session's kube_cluster (tests/conftest.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.lab]

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import BatchV1Api, CoreV1Api, CustomObjectsApi  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402
from polling import until  # noqa: E402


def _plan():
    from clusterforge.loading import load_and_plan

    return load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")[1]


PLAN = _plan()
CONTROL = next(d for d in PLAN.devices if d.kind == "control")
IMAGE = f"{CONTROL.management_ip}:5000/clusterforge/cf-gpu-probe:1"
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
TEST_LABEL = ("clusterforge.io/test", "kueue-live")
GPU = "nvidia.com/gpu"
assert PLAN.queueing is not None
QUEUES = {q.team: q for q in PLAN.queueing.queues}
CLUSTER_GPUS = sum(f.gpus for f in PLAN.queueing.flavors)
BORROWER = max(QUEUES, key=lambda t: QUEUES[t].nominal_gpus)  # research: 6 of its own, borrows inference's 2
LENDER = min(QUEUES, key=lambda t: QUEUES[t].nominal_gpus)
ADMIT_AFTER_END_S = 120.0  # the "admitted within two minutes of a running job ending"
START_S = 180.0  # the cluster's GPUs' pods all running (image pulls on 4 nodes of a shared 2-core machine)


class Lab:
    def __init__(self, kube_cluster) -> None:
        self.kube = kube_cluster
        self.batch, self.core = BatchV1Api(kube_cluster.api), CoreV1Api(kube_cluster.api)
        self.custom = CustomObjectsApi(kube_cluster.api)

    def submit(self, team: str, name: str) -> Any:
        """A one-GPU Job to the team's LocalQueue, submitted running: Kueue's webhook suspends it."""
        m = kubernetes.client
        labels = {TEST_LABEL[0]: TEST_LABEL[1]}
        container = m.V1Container(name="probe", image=IMAGE, args=["--hold"],
                                  resources=m.V1ResourceRequirements(requests={GPU: "1"}, limits={GPU: "1"}))
        job = m.V1Job(metadata=m.V1ObjectMeta(name=name, labels={**labels, QUEUE_LABEL: team}), spec=m.V1JobSpec(
            suspend=False, backoff_limit=0, template=m.V1PodTemplateSpec(
                metadata=m.V1ObjectMeta(labels=labels), spec=m.V1PodSpec(
                    runtime_class_name="nvidia", restart_policy="Never", termination_grace_period_seconds=5,
                    containers=[container]))))
        return self.batch.create_namespaced_job(team, job)

    def workloads(self, team: str) -> dict[str, dict]:
        """The team's Workloads by the name of the Job owning them."""
        items = self.custom.list_namespaced_custom_object(GROUP, VERSION, team, "workloads")["items"]
        return {o["name"]: w for w in items for o in w["metadata"].get("ownerReferences", []) if o.get("kind") == "Job"}

    @staticmethod
    def condition(workload: dict | None, kind: str) -> dict | None:
        return next((c for c in (workload or {}).get("status", {}).get("conditions", []) if c["type"] == kind), None)

    def admitted(self, team: str) -> set[str]:
        return {job for job, w in self.workloads(team).items()
                if (self.condition(w, "Admitted") or {}).get("status") == "True"}

    def running(self, team: str) -> dict[str, Any]:
        """The team's running test pods by Job name."""
        pods = self.core.list_namespaced_pod(team, label_selector=f"{TEST_LABEL[0]}={TEST_LABEL[1]}").items
        return {p.metadata.labels["job-name"]: p for p in pods
                if p.status.phase == "Running" and p.metadata.deletion_timestamp is None}

    def borrowed(self, team: str) -> int:
        cq = self.custom.get_cluster_custom_object(GROUP, VERSION, "clusterqueues", team)
        return sum(int(r.get("borrowed", 0)) for f in cq.get("status", {}).get("flavorsReservation", [])
                   for r in f["resources"] if r["name"] == GPU)

    def gpu_pods_elsewhere(self) -> list[str]:
        """Live pods holding GPUs that are not this module's (an earlier test's, still terminating)."""
        return [f"{p.metadata.namespace}/{p.metadata.name}" for p in self.core.list_pod_for_all_namespaces().items
                if p.status.phase in ("Pending", "Running") and (p.metadata.labels or {}).get(TEST_LABEL[0]) is None
                and any(GPU in ((c.resources and c.resources.limits) or {}) for c in p.spec.containers)]

    def clean(self) -> None:
        selector = f"{TEST_LABEL[0]}={TEST_LABEL[1]}"
        for team in QUEUES:
            for job in self.batch.list_namespaced_job(team, label_selector=selector).items:
                try:
                    self.batch.delete_namespaced_job(job.metadata.name, team, propagation_policy="Background",
                                                     grace_period_seconds=0)
                except ApiException as exc:
                    if exc.status != 404:
                        raise
        until("this module's Jobs and pods gone", lambda: not any(
            self.batch.list_namespaced_job(t, label_selector=selector).items
            or self.core.list_namespaced_pod(t, label_selector=selector).items for t in QUEUES), 90, 1)


@pytest.fixture(scope="module")
def lab(kube_cluster) -> Iterator[Lab]:
    lab = Lab(kube_cluster)
    lab.clean()  # nothing of an interrupted earlier run
    until("no other pod holds a GPU", lambda: not lab.gpu_pods_elsewhere(), 60, 1)
    try:
        yield lab
    finally:
        lab.clean()


def test_kueue_runs_on_the_control_node_with_its_webhooks_registered(kube_cluster):
    rc, out, err = kube_cluster.sh(CONTROL.name, "systemctl is-active kueue")
    assert rc == 0 and out.strip() == "active", out + err
    admission = kubernetes.client.AdmissionregistrationV1Api(kube_cluster.api)
    mutating = admission.read_mutating_webhook_configuration("kueue-mutating-webhook-configuration")
    assert [w.client_config.url for w in mutating.webhooks] == ["https://127.0.0.1:9443/mutate-batch-v1-job"]


@pytest.mark.parametrize("team", sorted(QUEUES))
def test_every_team_has_its_cluster_queue_and_local_queue_with_the_planned_quota(kube_cluster, team):
    custom = CustomObjectsApi(kube_cluster.api)
    cq = custom.get_cluster_custom_object(GROUP, VERSION, "clusterqueues", team)
    assert cq["spec"]["cohortName"] == PLAN.queueing.cohort
    got = {(f["name"], r["name"]): (r["nominalQuota"], r.get("borrowingLimit"), r.get("lendingLimit"))
           for group in cq["spec"]["resourceGroups"] for f in group["flavors"] for r in f["resources"]}
    assert got == {(q.flavor, GPU): (str(q.nominal_gpus), str(q.borrowing_limit_gpus), str(q.lending_limit_gpus))
                   for q in QUEUES[team].quotas}
    active = next(c for c in cq["status"]["conditions"] if c["type"] == "Active")
    assert active["status"] == "True", cq["status"]
    lq = custom.get_namespaced_custom_object(GROUP, VERSION, team, "localqueues", team)
    assert lq["spec"]["clusterQueue"] == team


def test_cluster_gpus_plus_one_jobs_leave_one_waiting_while_research_borrows(lab):
    started = time.monotonic()
    names = [f"kl-{BORROWER}-{i}" for i in range(CLUSTER_GPUS + 1)]
    suspended = [lab.submit(BORROWER, name).spec.suspend for name in names]
    assert suspended == [True] * len(names), "Kueue's webhook did not suspend the Jobs submitted running"
    until(f"{CLUSTER_GPUS} of {BORROWER}'s Jobs admitted and their pods running",
           lambda: len(lab.admitted(BORROWER)) == CLUSTER_GPUS and len(lab.running(BORROWER)) == CLUSTER_GPUS,
           START_S)
    print(f"\n{CLUSTER_GPUS} Jobs admitted and running {time.monotonic() - started:.1f} s after submission")
    time.sleep(3)  # nothing frees a GPU: the last stays waiting
    workloads = lab.workloads(BORROWER)
    waiting = [job for job in names if job not in lab.admitted(BORROWER)]
    assert len(waiting) == 1, waiting
    reserved = lab.condition(workloads[waiting[0]], "QuotaReserved")
    assert reserved is not None and reserved["status"] == "False", workloads[waiting[0]].get("status")
    assert not lab.batch.read_namespaced_job(waiting[0], BORROWER).status.active
    nominal = QUEUES[BORROWER].nominal_gpus
    until(f"{BORROWER}'s ClusterQueue reports {CLUSTER_GPUS - nominal} GPUs borrowed",
           lambda: lab.borrowed(BORROWER) == CLUSTER_GPUS - nominal, 30)


def test_a_running_job_ending_admits_the_waiting_one_within_two_minutes(lab):
    running = lab.running(BORROWER)
    waiting = [job for job in lab.workloads(BORROWER) if job not in lab.admitted(BORROWER)]
    assert len(running) == CLUSTER_GPUS and len(waiting) == 1, (sorted(running), waiting)
    job, pod = sorted(running.items())[0]
    container = pod.status.container_statuses[0].container_id.split("://", 1)[1]
    # the probe's container is stopped on its node: the probe exits 0 on SIGTERM and the Job completes
    stopped = time.monotonic()
    rc, out, err = lab.kube.sh(pod.spec.node_name, f"ctr -n k8s.io task kill --signal SIGTERM {container}")
    assert rc == 0, f"stopping {job}'s container on {pod.spec.node_name}: {out}{err}"

    def complete() -> bool:
        status = lab.batch.read_namespaced_job_status(job, BORROWER).status
        return any(c.type == "Complete" and c.status == "True" for c in status.conditions or [])

    until(f"{job} complete", complete, 60)
    ended = time.monotonic()
    until(f"{waiting[0]} admitted after {job} ended", lambda: waiting[0] in lab.admitted(BORROWER),
           ADMIT_AFTER_END_S)
    admitted = time.monotonic()
    print(f"\n{job} ended {ended - stopped:.1f} s after its container was stopped; {waiting[0]} admitted"
          f" {admitted - ended:.1f} s after that ({admitted - stopped:.1f} s after the stop)")
    assert admitted - stopped <= ADMIT_AFTER_END_S
    until(f"{waiting[0]}'s pod running on the freed GPU", lambda: waiting[0] in lab.running(BORROWER), 60)
    print(f"{waiting[0]}'s pod running {time.monotonic() - stopped:.1f} s after the stop")


def test_the_lender_submitting_reclaims_a_borrowed_gpu(lab):
    assert lab.borrowed(BORROWER) == CLUSTER_GPUS - QUEUES[BORROWER].nominal_gpus
    before = lab.admitted(BORROWER)
    started = time.monotonic()
    lab.submit(LENDER, f"kl-{LENDER}-0")
    until(f"{LENDER}'s Job admitted on its own GPUs", lambda: f"kl-{LENDER}-0" in lab.admitted(LENDER), 60)
    print(f"\n{LENDER}'s Job admitted {time.monotonic() - started:.1f} s after submission by reclaiming")

    def preempted() -> list[str]:
        return [job for job, w in lab.workloads(BORROWER).items() if job in before
                and any((lab.condition(w, kind) or {}).get("status") == "True" for kind in ("Preempted", "Evicted"))]

    assert until(f"one of {BORROWER}'s Jobs preempted", preempted, 30)
    until(f"{LENDER}'s pod running", lambda: f"kl-{LENDER}-0" in lab.running(LENDER), 60)
    print(f"{LENDER}'s pod running {time.monotonic() - started:.1f} s after submission")


RACK_LEVEL = next(level for level in PLAN.queueing.levels if level.endswith("/rack"))  # the plan's rack label key
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"  # Kueue v0.17's PodSetRequiredTopologyAnnotation


def _gpu_pod_spec(gpus: int, **spec: Any) -> Any:
    m = kubernetes.client
    container = m.V1Container(name="probe", image=IMAGE, args=["--hold"], resources=m.V1ResourceRequirements(
        requests={GPU: str(gpus)}, limits={GPU: str(gpus)}))
    return m.V1PodSpec(runtime_class_name="nvidia", restart_policy="Never", termination_grace_period_seconds=5,
                       containers=[container], **spec)


def test_a_two_node_job_asking_for_one_rack_waits_until_one_rack_fits_and_runs_there(lab):
    """Kueue's topology-aware scheduling (beta, on by default since Kueue v0.14: no feature gate) on the real
    kubelets. A one-GPU Job pinned to one node of each rack (its pod's nodeSelector, which Kueue's topology
    placement honours) leaves 3 GPUs in each rack; a Job of 2 pods of 2 GPUs each (a node holds 2: two nodes)
    that requires one rack fits research's quota but no rack, and waits. The Job in one rack ends: the waiting one
    is admitted, and both its pods run on the two nodes of that rack, read from the pods' nodeName and the nodes'
    labels. (The holders go through Kueue on purpose: Kueue v0.17 counts a pod it does not manage on a node, but
    that pod ending does not make it retry a waiting Workload; only Kueue's own events do.)"""
    lab.clean()  # the queueing tests before this one leave their Jobs holding every GPU of the cluster
    m = kubernetes.client
    labels = {TEST_LABEL[0]: TEST_LABEL[1]}
    nodes = {n.metadata.name: n.metadata.labels for n in lab.core.list_node().items
             if n.metadata.labels.get(PLAN.queueing.flavors[0].node_labels[0][0])}
    racks: dict[str, list[str]] = {}
    for name, node_labels in sorted(nodes.items()):
        assert all(level in node_labels for level in PLAN.queueing.levels), (name, node_labels)
        racks.setdefault(node_labels[RACK_LEVEL], []).append(name)
    assert len(racks) == 2 and all(len(hosts) == 2 for hosts in racks.values()), racks
    per_node = {int(n.status.allocatable.get(GPU, 0)) for n in lab.core.list_node().items if n.metadata.name in nodes}
    assert per_node == {2}, per_node

    started = time.monotonic()
    fillers = {rack: f"kl-hold-{rack}" for rack in racks}
    for rack, name in fillers.items():
        lab.batch.create_namespaced_job(BORROWER, m.V1Job(
            metadata=m.V1ObjectMeta(name=name, labels={**labels, QUEUE_LABEL: BORROWER}), spec=m.V1JobSpec(
                suspend=False, backoff_limit=0, template=m.V1PodTemplateSpec(
                    metadata=m.V1ObjectMeta(labels=labels), spec=_gpu_pod_spec(
                        1, node_selector={"kubernetes.io/hostname": racks[rack][0]})))))
    until("a GPU held on one node of each rack", lambda: set(fillers.values()) <= set(lab.running(BORROWER)), 90)
    held = {job: pod.spec.node_name for job, pod in lab.running(BORROWER).items() if job in fillers.values()}
    assert held == {fillers[rack]: racks[rack][0] for rack in racks}, held

    job = "kl-one-rack"
    lab.batch.create_namespaced_job(BORROWER, m.V1Job(
        metadata=m.V1ObjectMeta(name=job, labels={**labels, QUEUE_LABEL: BORROWER}), spec=m.V1JobSpec(
            suspend=False, parallelism=2, completions=2, backoff_limit=0, template=m.V1PodTemplateSpec(
                metadata=m.V1ObjectMeta(labels=labels, annotations={REQUIRED_TOPOLOGY: RACK_LEVEL}),
                spec=_gpu_pod_spec(2)))))

    def pending() -> dict | None:
        reserved = lab.condition(lab.workloads(BORROWER).get(job), "QuotaReserved")
        return reserved if reserved and reserved["status"] == "False" else None

    reserved = until(f"{job}'s Workload created and not admitted", pending, 30)
    time.sleep(5)  # 3 GPUs free in each rack: it stays waiting
    assert job not in lab.admitted(BORROWER), lab.workloads(BORROWER)[job].get("status")
    assert not lab.batch.read_namespaced_job(job, BORROWER).status.active
    print(f"\n{job} waiting: {reserved.get('message')}")
    assert "topology" in reserved.get("message", "").lower(), reserved

    freed = sorted(racks)[0]
    lab.batch.delete_namespaced_job(fillers[freed], BORROWER, propagation_policy="Background", grace_period_seconds=0)
    ended = time.monotonic()
    until(f"{job} admitted once {freed} has room", lambda: job in lab.admitted(BORROWER), 60)
    admitted = time.monotonic()

    def running_pods() -> list[Any]:
        pods = lab.core.list_namespaced_pod(BORROWER, label_selector=f"job-name={job}").items
        return pods if sum(p.status.phase == "Running" for p in pods) == 2 else []

    pods = until(f"{job}'s 2 pods running", running_pods, 90)
    hosts = sorted(p.spec.node_name for p in pods)
    print(f"{job} admitted {admitted - ended:.1f} s after the Job in {freed} was deleted, both pods running"
          f" {time.monotonic() - admitted:.1f} s later on {hosts} ({RACK_LEVEL}="
          f"{sorted({nodes[h][RACK_LEVEL] for h in hosts})}); {time.monotonic() - started:.1f} s in all")
    assert len(set(hosts)) == 2 and {nodes[h][RACK_LEVEL] for h in hosts} == {freed}, (hosts, racks)
    assert hosts == sorted(racks[freed])
