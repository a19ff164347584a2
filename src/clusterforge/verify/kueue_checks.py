"""Kueue's checks against a live API server, where the declaration turns Kueue on (``kubernetes: {kueue: true}``).

Every planned team's ClusterQueue and LocalQueue are read and compared with the plan (verify/queue_compare.py: cohort,
nominal quota, borrowing and lending limits per flavor, Active; the LocalQueue in the team's namespace feeding the
team's ClusterQueue). Then a live probe: a one-GPU Job of the cluster registry's probe image (the image of the
Kubernetes checks' probe pods, clusterforge.verify.kube_checks) is created suspended with the
``kueue.x-k8s.io/queue-name`` label of the team with the most nominal GPUs. Only Kueue can start it: the check
passes when its Workload is admitted by that team's ClusterQueue and the Job completes (the probe saw its GPU and
exited 0). Created suspended, the Job cannot run past a Kueue that is missing or ignores it. The Job and its pods
are deleted afterwards. On nodes whose GPUs the lab's plugin advertises the probe's outcome is SIMULATED (the
admission is real, the GPU it was given is not)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from clusterforge.verify.kube_checks import RUNTIME_CLASS, SIMULATED_GPUS, SIMULATED_PLUGIN, probe_image
from clusterforge.verify.layer_check import LayerCheck
from clusterforge.verify.queue_compare import GPU_RESOURCE, nominal_gpus, planned_queues, queue_checks

__all__ = ["GROUP", "VERSION", "QUEUE_LABEL", "PROBE_JOB", "run_kueue_checks", "probe_team"]

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"  # the version the pinned Kueue stores (render/kueue.py)
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PROBE_JOB = "clusterforge-verify-queue-probe"
MANAGED_BY = {"app.kubernetes.io/managed-by": "clusterforge"}


def _get(read: Any, *args: Any) -> dict[str, Any] | None:
    from kubernetes.client.rest import ApiException

    try:
        return dict(read(GROUP, VERSION, *args))
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _queues(custom: Any, queueing: Mapping[str, Any]) -> list[LayerCheck]:
    teams = [q["team"] for q in queueing["queues"]]
    cluster = {t: _get(custom.get_cluster_custom_object, "clusterqueues", t) for t in teams}
    local = {t: _get(custom.get_namespaced_custom_object, t, "localqueues", t) for t in teams}
    return queue_checks(queueing, cluster, local)


def probe_team(queueing: Mapping[str, Any]) -> str | None:
    """The team the probe Job is queued for: the most nominal GPUs (first declared on ties); None with no GPUs."""
    teams = [q for q in queueing["queues"] if nominal_gpus(q) > 0]
    return str(max(teams, key=nominal_gpus)["team"]) if teams else None


def _job(team: str, image: str) -> Any:
    from kubernetes import client

    gpu = {GPU_RESOURCE: "1"}
    container = client.V1Container(name="probe", image=image,
                                   resources=client.V1ResourceRequirements(requests=gpu, limits=gpu))
    return client.V1Job(
        metadata=client.V1ObjectMeta(name=PROBE_JOB, labels={**MANAGED_BY, QUEUE_LABEL: team}),
        spec=client.V1JobSpec(suspend=True, backoff_limit=0, template=client.V1PodTemplateSpec(
            metadata=client.V1ObjectMeta(labels=dict(MANAGED_BY)),
            spec=client.V1PodSpec(runtime_class_name=RUNTIME_CLASS, restart_policy="Never",
                                  termination_grace_period_seconds=5, containers=[container]))))


def _delete(batch: Any, team: str) -> None:
    from kubernetes.client.rest import ApiException

    try:
        batch.delete_namespaced_job(PROBE_JOB, team, propagation_policy="Background", grace_period_seconds=0)
    except ApiException as exc:
        if exc.status != 404:
            raise


def _gone(batch: Any, team: str, timeout_s: float) -> bool:
    from kubernetes.client.rest import ApiException

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            batch.read_namespaced_job(PROBE_JOB, team)
        except ApiException as exc:
            if exc.status == 404:
                return True
            raise
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)


def _condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


def _workload(custom: Any, team: str, uid: str) -> Mapping[str, Any] | None:
    items = custom.list_namespaced_custom_object(GROUP, VERSION, team, "workloads")["items"]
    return next((w for w in items for o in w["metadata"].get("ownerReferences") or []
                 if o.get("kind") == "Job" and o.get("uid") == uid), None)


def _watch(batch: Any, custom: Any, team: str, uid: str, timeout_s: float
           ) -> tuple[float | None, Mapping[str, Any] | None, dict[str, str], float]:
    """Until the Job completes or fails, or `timeout_s`: (seconds to admission or None, its Workload, the Job's
    conditions by type, seconds waited)."""
    started = time.monotonic()
    admitted_s: float | None = None
    workload: Mapping[str, Any] | None = None
    while True:
        workload = _workload(custom, team, uid) or workload
        if admitted_s is None and workload and (_condition(workload, "Admitted") or {}).get("status") == "True":
            admitted_s = time.monotonic() - started
        job = batch.read_namespaced_job_status(PROBE_JOB, team)
        states = {c.type: c.status for c in job.status.conditions or []}
        elapsed = time.monotonic() - started
        if states.get("Complete") == "True" or states.get("Failed") == "True" or elapsed >= timeout_s:
            return admitted_s, workload, states, elapsed
        time.sleep(0.5)


def _verdict(core: Any, name: str, team: str, timeout_s: float, watched: tuple[float | None, Mapping[str, Any] | None,
             dict[str, str], float]) -> LayerCheck:
    admitted_s, workload, states, elapsed = watched
    pods = core.list_namespaced_pod(team, label_selector=f"job-name={PROBE_JOB}").items
    log, node = "", None
    if pods:
        node = pods[0].spec.node_name
        if pods[0].status.phase in ("Succeeded", "Failed"):
            log = core.read_namespaced_pod_log(pods[0].metadata.name, team, container="probe")
    allocated = next((ln for ln in log.splitlines() if "allocated" in ln), "").removeprefix("cf-gpu-probe: ")
    by = ((workload or {}).get("status") or {}).get("admission", {}).get("clusterQueue")
    if states.get("Complete") == "True" and admitted_s is not None and by == team:
        labels = (core.read_node(node).metadata.labels or {}) if node else {}
        simulated = SIMULATED_GPUS if labels.get(SIMULATED_PLUGIN[0]) == SIMULATED_PLUGIN[1] else ""
        return LayerCheck(name, True, f"admitted by ClusterQueue {by} {admitted_s:.1f} s after submission,"
                                      f" completed on {node} after {elapsed:.1f} s: {allocated or 'exited 0'}",
                          simulated)
    if admitted_s is None:
        reserved = _condition(workload or {}, "QuotaReserved")
        why = ("no Workload was created for it (is Kueue running and managing Jobs?)" if workload is None
               else f"QuotaReserved {reserved.get('status')}: {reserved.get('message')}" if reserved
               else "its Workload has no QuotaReserved condition")
        return LayerCheck(name, False, f"team {team}: the probe Job was not admitted within {timeout_s:.0f} s: {why}")
    if by != team:
        return LayerCheck(name, False, f"team {team}: the probe Job was admitted by ClusterQueue {by}, planned {team}")
    waiting = [c.state.waiting.reason for p in pods for c in p.status.container_statuses or []
               if c.state and c.state.waiting]
    what = "failed" if states.get("Failed") == "True" else f"did not complete within {timeout_s:.0f} s"
    return LayerCheck(name, False, f"team {team}: admitted after {admitted_s:.1f} s, then the Job {what}"
                                   f" {waiting or ''} {log.strip()[-200:]}".rstrip())


def _probe(api_client: Any, queueing: Mapping[str, Any], image: str, timeout_s: float) -> LayerCheck:
    from kubernetes import client

    team = probe_team(queueing)
    if team is None:
        return LayerCheck("probe job", False, "no team with nominal GPUs: no LocalQueue to queue the probe Job in")
    name = f"probe job via localqueue {team}"
    batch: Any = client.BatchV1Api(api_client)
    custom: Any = client.CustomObjectsApi(api_client)
    _delete(batch, team)  # an interrupted earlier run's
    if not _gone(batch, team, timeout_s):
        return LayerCheck(name, False, f"team {team}: an earlier probe Job {PROBE_JOB} is still being deleted")
    uid = batch.create_namespaced_job(team, _job(team, image)).metadata.uid
    try:
        watched = _watch(batch, custom, team, uid, timeout_s)
        return _verdict(client.CoreV1Api(api_client), name, team, timeout_s, watched)
    finally:
        _delete(batch, team)


def run_kueue_checks(api_client: Any, expected: Mapping[str, Any], timeout_s: float = 60.0,
                     probe: bool = True) -> list[LayerCheck]:
    """With Kueue declared (queue_compare.planned_queues; else no check, []): the queue checks (each team's
    ClusterQueue and LocalQueue; read again up to `timeout_s` until they hold, as Kueue marks a new ClusterQueue
    Active a moment after it is applied), then, with `probe`, the probe Job through the LocalQueue of
    `probe_team`. `expected`: the control node's cf_kubernetes host var (kubernetes_vars), as kube_checks takes."""
    from kubernetes import client

    queueing = planned_queues(expected)
    if queueing is None:
        return []
    custom = client.CustomObjectsApi(api_client)
    deadline = time.monotonic() + timeout_s
    while True:
        checks = _queues(custom, queueing)
        if all(c.ok for c in checks) or time.monotonic() >= deadline:
            break
        time.sleep(1)
    if probe:
        checks.append(_probe(api_client, queueing, probe_image(expected), timeout_s))
    return checks
