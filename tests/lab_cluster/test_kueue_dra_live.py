"""Quotas that count DRA claims on the lab's real cluster (inventory/lab.yaml, kubernetes.kueue): kueue.service on
ctl-01 runs the role's configuration with the plan's deviceClassMappings (every DeviceClass counted as
nvidia.com/gpu) and Kueue's alpha DynamicResourceAllocation gate; the API server's quota controller counts claims
per DeviceClass.

The lab's GPU servers run the device plugin (k8s_gpu_mode is device-plugin there): no DRA driver publishes devices
and the role applies no DeviceClass. The test applies roles/k8s_gpu's DeviceClass and research's claim templates,
rendered from the plan's classes, and removes them after. Kueue admits on quota, not on allocated devices: an
admitted Job's pods stay Pending (no device to allocate); what is asserted is Kueue's Workload and ClusterQueue
status. Then the role's DRA-mode ResourceQuota, in a namespace of the test's own, refuses a ResourceClaim over its
device cap. Uses the session's kube_cluster (tests/conftest.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = [pytest.mark.lab]

kubernetes = pytest.importorskip("kubernetes")
from dra_claims import claim_job, gpu_usage, role_dra_objects, role_team_quotas  # noqa: E402
from kubernetes.client import BatchV1Api, CoreV1Api, CustomObjectsApi  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402
from polling import until  # noqa: E402


def _plan():
    from clusterforge.loading import load_and_plan

    return load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")[1]


PLAN = _plan()
assert PLAN.queueing is not None


def _kube_vars() -> dict[str, Any]:
    from clusterforge.render.ansible_inventory import kubernetes_vars

    return kubernetes_vars(PLAN)


KUBE = _kube_vars()
CLASSES = KUBE["gpu_device_classes"]
CONTROL = next(d for d in PLAN.devices if d.kind == "control")
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
TEAM = max(PLAN.queueing.queues, key=lambda q: q.nominal_gpus)  # research: 6 of its own + 2 borrowable
LABELS = {"clusterforge.io/test": "kueue-dra-live"}
QUOTA_NAMESPACE = "cf-test-dra-quota"


def _ignore_404(call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    try:
        call(*args, **kwargs)
    except ApiException as exc:
        if exc.status != 404:
            raise


class Lab:
    def __init__(self, kube_cluster) -> None:
        self.kube = kube_cluster
        self.batch, self.core = BatchV1Api(kube_cluster.api), CoreV1Api(kube_cluster.api)
        self.custom = CustomObjectsApi(kube_cluster.api)

    def workload(self, job: str) -> dict | None:
        items = self.custom.list_namespaced_custom_object(GROUP, VERSION, TEAM.team, "workloads")["items"]
        return next((w for w in items if any(o.get("kind") == "Job" and o.get("name") == job
                                             for o in w["metadata"].get("ownerReferences", []))), None)

    def condition(self, job: str, kind: str) -> dict | None:
        return next((c for c in ((self.workload(job) or {}).get("status") or {}).get("conditions", [])
                     if c["type"] == kind), None)

    def reserved_gpus(self) -> int:
        cq = self.custom.get_cluster_custom_object(GROUP, VERSION, "clusterqueues", TEAM.team)
        return sum(int(r.get("total", 0)) for f in (cq.get("status") or {}).get("flavorsReservation", [])
                   for r in f["resources"] if r["name"] == "nvidia.com/gpu")

    def clean(self) -> None:
        selector = ",".join(f"{k}={v}" for k, v in LABELS.items())
        for job in self.batch.list_namespaced_job(TEAM.team, label_selector=selector).items:
            _ignore_404(self.batch.delete_namespaced_job, job.metadata.name, TEAM.team,
                        propagation_policy="Background", grace_period_seconds=0)
        until("this module's Jobs and pods gone", lambda: not (
            self.batch.list_namespaced_job(TEAM.team, label_selector=selector).items
            or self.core.list_namespaced_pod(TEAM.team, label_selector=selector).items), 90, 1)


@pytest.fixture(scope="module")
def lab(kube_cluster) -> Iterator[Lab]:
    """research's ClusterQueue idle, the plan's DeviceClass and research's claim templates applied (as roles/k8s_gpu
    renders them in DRA mode); removed after, with every Job of the module."""
    lab = Lab(kube_cluster)
    lab.clean()
    until(f"{TEAM.team}'s ClusterQueue idle", lambda: lab.reserved_gpus() == 0, 90, 1)
    made: list[dict] = []
    try:
        for obj in role_dra_objects(CLASSES, [TEAM.team]):
            plural = "deviceclasses" if obj["kind"] == "DeviceClass" else "resourceclaimtemplates"
            if obj["kind"] == "DeviceClass":
                lab.custom.create_cluster_custom_object("resource.k8s.io", "v1", plural, obj)
            else:
                lab.custom.create_namespaced_custom_object("resource.k8s.io", "v1", TEAM.team, plural, obj)
            made.append(obj)
        yield lab
    finally:
        lab.clean()
        for obj in reversed(made):
            if obj["kind"] == "DeviceClass":
                _ignore_404(lab.custom.delete_cluster_custom_object, "resource.k8s.io", "v1", "deviceclasses",
                            obj["metadata"]["name"])
            else:
                _ignore_404(lab.custom.delete_namespaced_custom_object, "resource.k8s.io", "v1", TEAM.team,
                            "resourceclaimtemplates", obj["metadata"]["name"])


def test_kueue_runs_the_role_s_configuration_with_the_plan_s_device_classes(kube_cluster):
    """The configuration kueue.service started with (a configuration Kueue refuses fails its start)."""
    rc, out, err = kube_cluster.sh(CONTROL.name, "systemctl is-active kueue && cat /etc/kueue/config.yaml")
    assert rc == 0 and out.startswith("active\n"), out + err
    config = yaml.safe_load(out.split("\n", 1)[1])
    assert config["resources"]["deviceClassMappings"] == KUBE["queueing"]["device_class_mappings"] == [
        {"name": "nvidia.com/gpu", "deviceClassNames": [c["name"] for c in CLASSES]}]
    assert config["featureGates"]["DynamicResourceAllocation"] is True


def test_a_claim_template_job_is_counted_as_nvidia_gpu_and_one_over_quota_waits(lab):
    """2 pods claiming one GPU each through `<model>-1`: admitted, 2 nvidia.com/gpu in the Workload's admission
    and in research's ClusterQueue. 9 such pods, over research's nominal 6 + borrowing 2 while 2 are in use and
    over its 8 anyway: QuotaReserved False on nvidia.com/gpu, the Job stays suspended."""
    template = f"{CLASSES[0]['short_name']}-1"
    started = time.monotonic()
    job = lab.batch.create_namespaced_job(TEAM.team, claim_job("kd-2", TEAM.team, 2, template, LABELS,
                                                               suspend=False))
    assert job.spec.suspend is True, "Kueue's webhook did not suspend the Job submitted running"
    until("kd-2 admitted", lambda: (lab.condition("kd-2", "Admitted") or {}).get("status") == "True", 60)
    admitted = time.monotonic() - started
    assert gpu_usage(lab.workload("kd-2")) == 2, lab.workload("kd-2")
    until(f"{TEAM.team}'s ClusterQueue reserves the 2 claimed GPUs", lambda: lab.reserved_gpus() == 2, 30)
    until("kd-2 started by Kueue", lambda: not lab.batch.read_namespaced_job("kd-2", TEAM.team).spec.suspend, 30)

    lab.batch.create_namespaced_job(TEAM.team, claim_job("kd-9", TEAM.team, 9, template, LABELS, suspend=False))

    def refused() -> dict | None:
        c = lab.condition("kd-9", "QuotaReserved")
        return c if c and c["status"] == "False" and "insufficient quota for nvidia.com/gpu" in c["message"] else None

    reason = until("kd-9 refused on quota", refused, 30)
    time.sleep(2)
    assert (lab.condition("kd-9", "Admitted") or {}).get("status") != "True", lab.workload("kd-9")
    assert lab.batch.read_namespaced_job("kd-9", TEAM.team).spec.suspend is True
    assert lab.reserved_gpus() == 2
    print(f"\nkd-2 admitted {admitted:.1f} s after submission; kd-9 waits: {reason['message']}")


def test_the_role_s_dra_quota_refuses_a_claim_over_the_device_cap(kube_cluster):
    """roles/k8s_gpu's DRA-mode ResourceQuota (one device of the class) in a namespace of the test's: once the
    quota controller has counted, a claim for one device is created and a second is refused by the API server."""
    core, custom = CoreV1Api(kube_cluster.api), CustomObjectsApi(kube_cluster.api)
    cls = CLASSES[0]
    objects = role_team_quotas([{"name": QUOTA_NAMESPACE, "gpus": 1, "dra_devices": {cls["name"]: 1}}], CLASSES)
    namespace, quota = objects
    key = f"{cls['name']}.deviceclass.resource.k8s.io/devices"
    assert quota["spec"]["hard"] == {"requests.nvidia.com/gpu": "1", key: "1"}, quota
    namespace["metadata"].setdefault("labels", {}).update(LABELS)

    def claim(name: str) -> dict:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": cls["name"], "allocationMode": "ExactCount", "count": 1}}]}}}

    core.create_namespace(namespace)
    try:
        core.create_namespaced_resource_quota(QUOTA_NAMESPACE, quota)
        until("the quota counted", lambda: (core.read_namespaced_resource_quota("gpu-quota", QUOTA_NAMESPACE)
                                             .status.hard or {}).get(key) == "1", 60)
        custom.create_namespaced_custom_object("resource.k8s.io", "v1", QUOTA_NAMESPACE, "resourceclaims",
                                               claim("one"))
        with pytest.raises(ApiException) as refused:
            custom.create_namespaced_custom_object("resource.k8s.io", "v1", QUOTA_NAMESPACE, "resourceclaims",
                                                   claim("two"))
        assert refused.value.status == 403 and "exceeded quota" in str(refused.value.body), refused.value.body
        assert key in str(refused.value.body)
    finally:
        _ignore_404(core.delete_namespace, QUOTA_NAMESPACE)
        until(f"namespace {QUOTA_NAMESPACE} gone", lambda: QUOTA_NAMESPACE not in {
            n.metadata.name for n in core.list_namespace().items}, 90, 1)
