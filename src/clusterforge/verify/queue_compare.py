"""What `verify` finds wrong in Kueue's queues, compared with the plan's: pure functions of the plan's queueing record
(`queueing` in the control node's cf_kubernetes host var, render.ansible_inventory.kubernetes_vars: plan/queueing.py's
QueueingPlan.to_dict()) and the objects the API server returned (ClusterQueue and LocalQueue as JSON dicts, None
where the object does not exist). The list of checks comes from the plan: one ClusterQueue check and one LocalQueue
check per planned team, whatever the cluster holds besides.

A ClusterQueue passes when it is in the planned cohort, quotes exactly the planned flavors for ``nvidia.com/gpu``
with the planned nominal quota, borrowing limit and lending limit in each, and Kueue reports it Active. Every
difference is named with the team and both values ("nominal quota 7 ..., planned 6"). A LocalQueue passes when it
exists in the team's namespace and points at the team's ClusterQueue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterforge.verify.layer_check import LayerCheck

__all__ = ["GPU_RESOURCE", "cluster_queue_check", "local_queue_check", "queue_checks", "observed_quotas",
           "planned_queues", "nominal_gpus"]

GPU_RESOURCE = "nvidia.com/gpu"  # the one resource Kueue queues here (plan/queueing.py)
# (flavor) -> (nominal, borrowing limit, lending limit) as the API returned them; None where a limit is absent
Quotas = dict[str, tuple[str | None, str | None, str | None]]
_LIMITS = (("nominal quota", "nominal_gpus"), ("borrowing limit", "borrowing_limit_gpus"),
           ("lending limit", "lending_limit_gpus"))


def planned_queues(expected: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The queues `verify` checks: the plan's where the declaration turns Kueue on (``kubernetes: {kueue: true}``,
    queueing.enabled); None (no Kueue check planned) where it does not, though the queues are planned and rendered."""
    queueing = expected.get("queueing")
    return queueing if queueing and queueing.get("enabled") else None


def nominal_gpus(team: Mapping[str, Any]) -> int:
    return sum(int(q["nominal_gpus"]) for q in team["quotas"])


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def observed_quotas(cluster_queue: Mapping[str, Any]) -> Quotas:
    """The ClusterQueue's ``nvidia.com/gpu`` quotas by flavor (other resources are not Kueue's to queue here)."""
    found: Quotas = {}
    for group in (cluster_queue.get("spec") or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for resource in flavor.get("resources") or []:
                if resource.get("name") == GPU_RESOURCE:
                    found[str(flavor.get("name"))] = (_text(resource.get("nominalQuota")),
                                                      _text(resource.get("borrowingLimit")),
                                                      _text(resource.get("lendingLimit")))
    return found


def _same(got: str | None, planned: int) -> bool:
    """A quantity as Kueue returns it ("6", or 6) equal to the planned whole number of GPUs."""
    if got is None:
        return False
    try:
        return int(got) == planned
    except ValueError:
        return False  # "6500m" and the like: not a whole GPU count, so not the plan's


def cluster_queue_check(team: Mapping[str, Any], cohort: str, cluster_queue: Mapping[str, Any] | None) -> LayerCheck:
    """`team`: one of the planned queues ({team, quotas: [{flavor, nominal_gpus, borrowing_limit_gpus,
    lending_limit_gpus}]})."""
    who = team["team"]
    name = f"clusterqueue {who}"
    if cluster_queue is None:
        return LayerCheck(name, False, f"team {who}: no ClusterQueue {who} (planned nominal quota"
                                       f" {nominal_gpus(team)} GPUs)")
    problems = []
    got_cohort = (cluster_queue.get("spec") or {}).get("cohortName")
    if got_cohort != cohort:
        problems.append(f"cohort {got_cohort}, planned {cohort}")
    quotas = observed_quotas(cluster_queue)
    for planned in team["quotas"]:
        flavor = planned["flavor"]
        got = quotas.get(flavor)
        if got is None:
            problems.append(f"flavor {flavor}: no {GPU_RESOURCE} quota, planned nominal quota"
                            f" {planned['nominal_gpus']}")
            continue
        for (what, key), value in zip(_LIMITS, got, strict=True):
            if not _same(value, int(planned[key])):
                shown = "none" if value is None else value
                problems.append(f"{GPU_RESOURCE} {what} {shown} in flavor {flavor}, planned {planned[key]}")
    for flavor in sorted(set(quotas) - {q["flavor"] for q in team["quotas"]}):
        problems.append(f"flavor {flavor} quoted ({GPU_RESOURCE} nominal quota {quotas[flavor][0]}), not planned")
    conditions = (cluster_queue.get("status") or {}).get("conditions") or []
    active = next((c for c in conditions if c.get("type") == "Active"), None)
    if active is None or active.get("status") != "True":
        why = "no Active condition yet" if active is None else f"{active.get('reason')}: {active.get('message')}"
        problems.append(f"not active ({why})")
    if problems:
        return LayerCheck(name, False, f"team {who}: " + "; ".join(problems))
    limits = ", ".join(f"{q['flavor']} nominal {q['nominal_gpus']} borrowing {q['borrowing_limit_gpus']} lending"
                       f" {q['lending_limit_gpus']}" for q in team["quotas"])
    return LayerCheck(name, True, f"cohort {cohort}, {GPU_RESOURCE} {limits} as planned; active")


def local_queue_check(team: Mapping[str, Any], local_queue: Mapping[str, Any] | None) -> LayerCheck:
    who = team["team"]
    name = f"localqueue {who}"
    if local_queue is None:
        return LayerCheck(name, False, f"team {who}: no LocalQueue {who} in namespace {who}")
    target = (local_queue.get("spec") or {}).get("clusterQueue")
    if target != who:
        return LayerCheck(name, False, f"team {who}: LocalQueue {who} feeds ClusterQueue {target}, planned {who}")
    return LayerCheck(name, True, f"in namespace {who}, feeds ClusterQueue {who}")


def queue_checks(queueing: Mapping[str, Any], cluster_queues: Mapping[str, Mapping[str, Any] | None],
                 local_queues: Mapping[str, Mapping[str, Any] | None]) -> list[LayerCheck]:
    """Every planned team's ClusterQueue check, then every team's LocalQueue check (objects by team name; a team
    absent from a mapping has no such object)."""
    teams = list(queueing["queues"])
    return ([cluster_queue_check(t, str(queueing["cohort"]), cluster_queues.get(t["team"])) for t in teams]
            + [local_queue_check(t, local_queues.get(t["team"])) for t in teams])
