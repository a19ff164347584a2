"""Kueue admitting the lab's GPU jobs by the plan's queues: quota, borrowing, reclaim and topology.

Real: the kube-apiserver and etcd (tests/kube/loopback_api.py), Kueue's upstream CRDs, the pinned kueue binary
(scripts/setup-k8s.sh) with roles/k8s_kueue's configuration template, and the objects clusterforge renders for
inventory/lab.yaml (teams research: 6 GPUs, inference: 2; 4 nodes of 2 GPUs in 2 racks).
Not real: the Nodes are API objects this test creates with the plan's labels, the GPU taint, capacity and a Ready
condition (and without the not-ready taint the node lifecycle controller would lift); no kubelet, scheduler, job
controller or garbage collector runs, so no pod is ever created. Kueue admits on quota and on the nodes' capacity,
not on running pods, so admission is what is shown: a Workload's Admitted condition and its topology assignment.
A finished job is shown by deleting the Job and its Workload (what the garbage collector would do after the Job
is deleted).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import pytest
import yaml

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import BatchV1Api, CoreV1Api, CustomObjectsApi  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402
from kueue_helpers import (  # noqa: E402
    QUEUE_LABEL,
    REPO_ROOT,
    gpu_job,
    gpu_node,
    kubectl,
    node_status,
    role_webhooks,
    start_kueue,
)
from loopback_api import free_port  # noqa: E402

from clusterforge.pulumi.kube.teardown import api_client  # noqa: E402

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
RACK_LABEL = "topology.clusterforge.io/rack"
WAIT_S = 60.0
RETRY_429_S = 30.0
PENDING_S = 8.0  # how long a job that must wait is watched not being admitted


@pytest.fixture(scope="module")
def lab_queues(kueue_api, tmp_path_factory) -> Iterator[dict]:
    from clusterforge.loading import load_and_plan
    from clusterforge.render.ansible_inventory import kubernetes_vars
    from clusterforge.render.scheduler import scheduler_files

    _, plan, _ = load_and_plan(REPO_ROOT / "inventory" / "lab.yaml")
    assert plan.kubernetes is not None and plan.queueing is not None
    core = CoreV1Api(api_client(kueue_api.kubeconfig))
    racks = {}
    for node in plan.kubernetes.nodes:
        body = gpu_node(node.name, {**dict(node.labels), "clusterforge.io/gpu-model": node.gpu_model}, node.gpus)
        core.create_node(body)
        core.patch_node_status(node.name, node_status(node.gpus))
        # the API server taints a new node not-ready; the node lifecycle controller (not run here) lifts it
        # once the node reports Ready
        core.patch_node(node.name, {"spec": {"taints": body["spec"]["taints"]}})
        racks[node.name] = dict(node.labels)[RACK_LABEL]
    kubectl(kueue_api, "apply", "--server-side", "--field-manager", "clusterforge", "-f", "-",
            stdin=scheduler_files(plan)["kubernetes/kueue.yaml"])
    work = tmp_path_factory.mktemp("kueue")
    ports = {"health": free_port(), "webhook": free_port(), "metrics": free_port()}
    # what playbooks/kubernetes.yml passes from the plan: every DeviceClass counted as nvidia.com/gpu (DRA gate on)
    mappings = kubernetes_vars(plan)["queueing"]["device_class_mappings"]
    kueue = start_kueue(kueue_api, kueue_api.kueue_dir, work, ports, {"k8s_kueue_device_class_mappings": mappings})
    try:
        yield {"plan": plan, "racks": racks, "kueue": kueue, "work": work, "ports": ports}
    finally:
        kueue.stop()


class RetryingOn429:
    """An API object whose calls are retried while the API server answers 429 "storage is (re)initializing".

    Kueue's certificate controller writes its CA into the CRDs' conversion webhook after it starts; each such CRD
    update re-initialises that resource's storage, and for a moment every request for it gets 429 with
    Retry-After (seen in CI on the first Workload list). Any other error, or a 429 lasting RETRY_429_S, is raised.
    """

    def __init__(self, api: object) -> None:
        self._api = api

    def __getattr__(self, name: str) -> Callable:
        call = getattr(self._api, name)

        def retried(*args, **kwargs):
            deadline = time.monotonic() + RETRY_429_S
            while True:
                try:
                    return call(*args, **kwargs)
                except ApiException as exc:
                    if exc.status != 429 or time.monotonic() > deadline:
                        raise
                    time.sleep(1)

        return retried


class Queues:
    def __init__(self, api, kueue) -> None:
        client = api_client(api.kubeconfig)
        self.batch, self.custom = RetryingOn429(BatchV1Api(client)), RetryingOn429(CustomObjectsApi(client))
        self.kueue = kueue
        self.jobs: list[tuple[str, str]] = []

    def submit(self, job: dict) -> None:
        self.batch.create_namespaced_job(job["metadata"]["namespace"], job)
        self.jobs.append((job["metadata"]["namespace"], job["metadata"]["name"]))

    def workload(self, team: str, job: str) -> dict | None:
        items = self.custom.list_namespaced_custom_object(GROUP, VERSION, team, "workloads")["items"]
        return next((w for w in items if any(o.get("name") == job for o in w["metadata"].get("ownerReferences", []))),
                    None)

    def condition(self, team: str, job: str, kind: str) -> dict | None:
        wl = self.workload(team, job)
        return next((c for c in (wl or {}).get("status", {}).get("conditions", []) if c["type"] == kind), None)

    def admitted(self, team: str, job: str) -> bool:
        cond = self.condition(team, job, "Admitted")
        return cond is not None and cond["status"] == "True"

    def wait(self, what: str, test: Callable[[], bool], timeout_s: float = WAIT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if test():
                return
            time.sleep(0.5)
        raise AssertionError(f"{what}: not within {timeout_s} s\nkueue log:\n{self.kueue.tail()}")

    def stays_pending(self, team: str, job: str) -> dict:
        """The job's Workload exists and is not admitted for PENDING_S; returns its QuotaReserved condition."""
        self.wait(f"{team}/{job} has a Workload", lambda: self.workload(team, job) is not None)
        deadline = time.monotonic() + PENDING_S
        while time.monotonic() < deadline:
            assert not self.admitted(team, job), f"{team}/{job} was admitted: {json.dumps(self.workload(team, job))}"
            time.sleep(0.5)
        cond = self.condition(team, job, "QuotaReserved")
        assert cond is not None and cond["status"] == "False", self.workload(team, job)
        return cond

    def finish(self, team: str, job: str) -> None:
        """The job ends: the Job and, as the garbage collector would, its Workload are deleted."""
        wl = self.workload(team, job)
        self.batch.delete_namespaced_job(job, team, propagation_policy="Background")
        if wl is not None:
            try:
                self.custom.delete_namespaced_custom_object(GROUP, VERSION, team, "workloads", wl["metadata"]["name"])
            except ApiException as exc:
                if exc.status != 404:
                    raise
        self.jobs.remove((team, job))

    def gpus_borrowed(self, team: str) -> int:
        cq = self.custom.get_cluster_custom_object(GROUP, VERSION, "clusterqueues", team)
        return sum(int(r.get("borrowed", 0)) for f in cq.get("status", {}).get("flavorsReservation", [])
                   for r in f["resources"] if r["name"] == "nvidia.com/gpu")

    def gpus_reserved(self, team: str) -> int:
        cq = self.custom.get_cluster_custom_object(GROUP, VERSION, "clusterqueues", team)
        return sum(int(r.get("total", 0)) for f in cq.get("status", {}).get("flavorsReservation", [])
                   for r in f["resources"] if r["name"] == "nvidia.com/gpu")

    def hosts(self, team: str, job: str) -> set[str]:
        """The nodes of the job's topology assignment: the hostname level's values of every slice (v1beta2
        writes each level's values as one `universal` value or `individual` roots between a prefix and a
        suffix)."""
        admission = (self.workload(team, job) or {}).get("status", {}).get("admission", {})
        names: set[str] = set()
        for podset in admission.get("podSetAssignments", []):
            assignment = podset.get("topologyAssignment") or {}
            level = assignment["levels"].index("kubernetes.io/hostname")
            for part in assignment.get("slices", []):
                values = part["valuesPerLevel"][level]
                if "universal" in values:
                    names.add(values["universal"])
                else:
                    one = values["individual"]
                    names.update(one.get("prefix", "") + root + one.get("suffix", "") for root in one["roots"])
        return names

    def clean(self) -> None:
        for team, job in list(self.jobs):
            self.finish(team, job)


@pytest.fixture
def queues(kueue_api, lab_queues) -> Iterator[Queues]:
    q = Queues(kueue_api, lab_queues["kueue"])
    try:
        yield q
    finally:
        q.clean()


def test_the_plan_matches_the_lab_numbers_these_tests_rely_on(lab_queues):
    """research 6 + 2 borrowable, inference 2 + 6, 8 GPUs over 2 racks of 2 nodes."""
    queueing = lab_queues["plan"].queueing
    numbers = {q.team: (q.quotas[0].nominal_gpus, q.quotas[0].borrowing_limit_gpus, q.quotas[0].lending_limit_gpus)
               for q in queueing.queues}
    assert numbers == {"research": (6, 2, 6), "inference": (2, 6, 2)}
    assert sorted(set(lab_queues["racks"].values())) == ["su01-r01", "su01-r02"]
    assert RACK_LABEL in queueing.levels


def test_over_quota_waits_then_borrows_then_is_reclaimed(queues):
    queues.submit(gpu_job("i1", "inference", 2))
    queues.wait("inference/i1 (its nominal 2) admitted", lambda: queues.admitted("inference", "i1"))
    queues.submit(gpu_job("r1", "research", 6))
    queues.wait("research/r1 (its nominal 6) admitted", lambda: queues.admitted("research", "r1"))

    # all 8 GPUs in use: inference's next job is over its nominal quota and nothing is idle to borrow
    queues.submit(gpu_job("i2", "inference", 2))
    pending = queues.stays_pending("inference", "i2")
    assert "insufficient" in pending["message"].lower() or "quota" in pending["message"].lower(), pending

    # research's job ends: its idle GPUs are lent, and inference's waiting job is admitted on them
    queues.finish("research", "r1")
    queues.wait("inference/i2 admitted on borrowed GPUs", lambda: queues.admitted("inference", "i2"))
    # the ClusterQueue's status follows the admission (Kueue updates it on its own time)
    queues.wait("inference's ClusterQueue reports 2 GPUs borrowed", lambda: queues.gpus_borrowed("inference") == 2)

    # research wants its own GPUs back: the borrowing job is preempted and research's job admitted
    queues.submit(gpu_job("r2", "research", 6))
    queues.wait("research/r2 admitted by reclaiming its lent GPUs", lambda: queues.admitted("research", "r2"))
    preempted = queues.condition("inference", "i2", "Preempted") or queues.condition("inference", "i2", "Evicted")
    assert preempted is not None and preempted["status"] == "True", queues.workload("inference", "i2")
    assert not queues.admitted("inference", "i2")
    assert queues.admitted("inference", "i1"), "the job within inference's nominal quota stays admitted"


def test_a_job_asking_for_one_rack_waits_until_one_rack_fits(queues, lab_queues):
    racks = lab_queues["racks"]
    queues.submit(gpu_job("t1", "research", 3, RACK_LABEL))
    queues.wait("research/t1 (3 GPUs in one rack) admitted", lambda: queues.admitted("research", "t1"))
    queues.submit(gpu_job("t2", "research", 3, RACK_LABEL))
    queues.wait("research/t2 (3 GPUs in one rack) admitted", lambda: queues.admitted("research", "t2"))
    rack_of = {job: {racks[h] for h in queues.hosts("research", job)} for job in ("t1", "t2")}
    assert all(len(r) == 1 for r in rack_of.values()) and rack_of["t1"] != rack_of["t2"], rack_of

    # one GPU free in each rack: 2 GPUs are within research's quota (inference lends its 2) but in no one rack
    queues.submit(gpu_job("t3", "research", 2, RACK_LABEL))
    queues.stays_pending("research", "t3")
    # the same 2 GPUs without a topology request fit: what t3 waits for is the rack, not quota
    queues.submit(gpu_job("free", "research", 2))
    queues.wait("research/free (2 GPUs anywhere) admitted", lambda: queues.admitted("research", "free"))
    assert {racks[h] for h in queues.hosts("research", "free")} == {"su01-r01", "su01-r02"}
    assert not queues.admitted("research", "t3")

    # t1 ends: its rack has 3 GPUs free again, and t3 is admitted there, inside that one rack
    queues.finish("research", "t1")
    queues.wait("research/t3 admitted in one rack", lambda: queues.admitted("research", "t3"))
    assert {racks[h] for h in queues.hosts("research", "t3")} == rack_of["t1"]


def test_gpus_claimed_through_claim_templates_count_as_nvidia_gpu(queues, kueue_api, lab_queues):
    """Kueue's alpha DynamicResourceAllocation gate with the plan's deviceClassMappings (every DeviceClass as
    nvidia.com/gpu) and roles/k8s_gpu's DeviceClass and claim templates: a research Job of 2 pods claiming through
    `<model>-1` is admitted charging 2 nvidia.com/gpu; a pod through `<model>-node` is charged the node's GPUs;
    a Job of 9 pods (research's nominal 6 + borrowing 2 = 8) waits on quota; a Job naming a ResourceClaim itself
    is never admitted (Kueue v0.17 counts claim templates only).

    Then the limit this shows: the nodes report no nvidia.com/gpu, as nodes whose GPUs are DRA devices only do,
    and a one-GPU claim Job is never admitted. Every flavor has a topology, and Kueue v0.17 places a pod set by
    its pod spec (which names no GPU) and then checks the mapped GPUs against the node's capacity (KEP 2941: DRA
    and topology-aware scheduling do not work together yet). The nodes' GPUs are restored after."""
    from dra_claims import claim_job, gpu_usage, role_dra_objects

    from clusterforge.render.ansible_inventory import kubernetes_vars

    classes = kubernetes_vars(lab_queues["plan"])["gpu_device_classes"]
    (cls,) = classes
    objects = yaml.safe_dump_all(role_dra_objects(classes, ["research"]))
    kubectl(kueue_api, "apply", "--server-side", "--field-manager", "clusterforge", "-f", "-", stdin=objects)
    core = CoreV1Api(api_client(kueue_api.kubeconfig))

    def requested(job: str) -> int:  # the nvidia.com/gpu Kueue counted for the job's pod set (admitted or not)
        status = (queues.workload("research", job) or {}).get("status") or {}
        return sum(int(r["resources"].get("nvidia.com/gpu", 0)) for r in status.get("resourceRequests", []))

    try:
        queues.submit(claim_job("d2", "research", 2, f"{cls['short_name']}-1"))
        queues.wait("research/d2 (2 claimed GPUs) admitted", lambda: queues.admitted("research", "d2"))
        assert gpu_usage(queues.workload("research", "d2")) == 2, queues.workload("research", "d2")
        queues.wait("research's ClusterQueue counts the 2 claimed GPUs", lambda: queues.gpus_reserved("research") == 2)
        queues.submit(claim_job("dn", "research", 1, f"{cls['short_name']}-node"))
        queues.wait("research/dn's node of GPUs counted", lambda: requested("dn") == cls["gpus_per_node"])
        queues.finish("research", "dn")

        def refused(job: str, reason: str, text: str) -> None:  # QuotaReserved False for that reason, not admitted
            queues.wait(f"research/{job} refused ({text})", lambda: (
                (c := queues.condition("research", job, "QuotaReserved")) is not None and c["status"] == "False"
                and c["reason"] == reason and text in c["message"]))
            assert not queues.admitted("research", job), queues.workload("research", job)

        queues.submit(claim_job("d9", "research", 9, f"{cls['short_name']}-1"))
        refused("d9", "Pending", "insufficient quota for nvidia.com/gpu")
        assert requested("d9") == 9 and not queues.batch.read_namespaced_job("d9", "research").status.active
        queues.submit(claim_job("dc", "research", 1, "", claim_name="a-claim"))
        refused("dc", "Inadmissible", "does not support use of resource claims")
        for job in ("d9", "dc", "d2"):
            queues.finish("research", job)

        for node in lab_queues["racks"]:  # DRA-only nodes: no nvidia.com/gpu in their status
            core.patch_node_status(node, {"status": {"capacity": {"nvidia.com/gpu": None},
                                                     "allocatable": {"nvidia.com/gpu": None}}})
        queues.submit(claim_job("dt", "research", 1, f"{cls['short_name']}-1"))
        waiting = queues.stays_pending("research", "dt")
        print(f"\nDRA-only nodes, a one-GPU claim Job: {waiting['message']}")
    finally:
        queues.clean()
        for node in lab_queues["plan"].kubernetes.nodes:
            core.patch_node_status(node.name, node_status(node.gpus))
        kubectl(kueue_api, "delete", "--ignore-not-found", "-f", "-", stdin=objects)


def test_kueue_runs_with_the_roles_configuration(lab_queues):
    """The configuration the test started Kueue with is the role's template: fair sharing on, GPUs alone, the
    plan's DeviceClasses counted as nvidia.com/gpu with the DynamicResourceAllocation gate on."""
    config = yaml.safe_load((lab_queues["kueue"].log.parent / "conf" / "config.yaml").read_text())
    assert config["fairSharing"]["preemptionStrategies"] and "cpu" in config["resources"]["excludeResourcePrefixes"]
    assert config["resources"]["deviceClassMappings"] == [
        {"name": "nvidia.com/gpu", "deviceClassNames": ["h200.gpu.clusterforge.io"]}]
    assert config["featureGates"]["DynamicResourceAllocation"] is True
    assert lab_queues["kueue"].proc.poll() is None, lab_queues["kueue"].tail()


def test_the_roles_webhooks_suspend_a_labelled_job_and_leave_others_alone(kueue_api, lab_queues):
    """roles/k8s_kueue's webhook configurations (loopback URL, the serving certificate as CA) registered with the
    API server: a Job with a queue-name label submitted running is suspended by Kueue on creation; one without the
    label is never sent to Kueue and stays running. A second server-side diff of what the role applies (the
    webhooks, the plan's objects, the CRDs) finds nothing: the role's second run changes nothing."""
    webhooks = role_webhooks(lab_queues["work"], lab_queues["ports"])
    ssa = ["--server-side", "--field-manager", "clusterforge"]
    kubectl(kueue_api, "apply", *ssa, "-f", "-", stdin=webhooks)
    batch = RetryingOn429(BatchV1Api(api_client(kueue_api.kubeconfig)))
    try:
        labelled, plain = gpu_job("hooked", "research", 1), gpu_job("plain", "research", 1)
        plain["metadata"]["labels"].pop(QUEUE_LABEL)
        for job in (labelled, plain):
            job["spec"]["suspend"] = False  # submitted running
        got = {job["metadata"]["name"]: batch.create_namespaced_job("research", job).spec.suspend
               for job in (labelled, plain)}
        assert got == {"hooked": True, "plain": False}, got
        # the role's diff-before-apply: nothing differs once applied
        from clusterforge.render.scheduler import scheduler_files

        for what, stdin in (("webhooks", webhooks),
                            ("objects", scheduler_files(lab_queues["plan"])["kubernetes/kueue.yaml"])):
            diff = kubectl(kueue_api, "diff", *ssa, "-f", "-", stdin=stdin, check=False)
            assert diff.returncode == 0, f"{what}: {diff.stdout}{diff.stderr}"
        diff = kubectl(kueue_api, "diff", *ssa, "--force-conflicts", "-f", str(kueue_api.kueue_dir / "crds"),
                       check=False)
        assert diff.returncode == 0, f"crds: {diff.stdout}{diff.stderr}"
    finally:
        for name in ("hooked", "plain"):
            try:
                batch.delete_namespaced_job(name, "research", propagation_policy="Background")
            except ApiException as exc:
                if exc.status != 404:
                    raise
        kubectl(kueue_api, "delete", "--ignore-not-found", "-f", "-", stdin=webhooks)
