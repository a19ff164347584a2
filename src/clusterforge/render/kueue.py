"""Kueue's objects from the plan's queueing record (plan/queueing.py), as the API objects roles/k8s_kueue applies.

Every object is ``kueue.x-k8s.io/v1beta2``, the version the pinned Kueue stores (its CRDs'
``storage: true``); tests/kube checks them against those CRDs on a real API server. In apply order:
the team Namespaces (roles/k8s_gpu makes the same ones; the LocalQueues live there), the Topology, one
ResourceFlavor per GPU model, the Cohort (holding the GPUs no team is given), one ClusterQueue and one
LocalQueue per team.

ClusterQueue settings beside the quotas: each admits only its own namespace (``namespaceSelector``), orders
work BestEffortFIFO (a job that does not fit does not hold back smaller ones behind it), reclaims its lent GPUs
from any borrower in the cohort (``reclaimWithinCohort: Any``) and preempts its own lower-priority work; fair
sharing weighs every team equally (weight 1; roles/k8s_kueue turns fair sharing on).
"""

from __future__ import annotations

from typing import Any

from clusterforge.plan.queueing import GPU_RESOURCE, HOSTNAME_LABEL, QueueingPlan
from clusterforge.render.yamltext import to_yaml

__all__ = ["API_VERSION", "kueue_objects", "kueue_manifests", "MANAGED_BY"]

API_VERSION = "kueue.x-k8s.io/v1beta2"
MANAGED_BY = {"app.kubernetes.io/managed-by": "clusterforge"}


def _meta(name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta | {"labels": dict(MANAGED_BY)}


def _resources(flavor: str, nominal: int, borrowing: int | None = None, lending: int | None = None
               ) -> dict[str, Any]:
    """Quantities as strings ("6"), the form Kueue writes them back in when its controller updates the object
    (adding its finalizer): with numbers, that update takes the field over from roles/k8s_kueue's server-side
    apply, whose next run conflicts."""
    quota: dict[str, Any] = {"name": GPU_RESOURCE, "nominalQuota": str(nominal)}
    if borrowing is not None:
        quota["borrowingLimit"] = str(borrowing)
    if lending is not None:
        quota["lendingLimit"] = str(lending)
    return {"name": flavor, "resources": [quota]}


def kueue_objects(q: QueueingPlan) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(t.team)}
                                     for t in q.queues]
    objects.append({"apiVersion": API_VERSION, "kind": "Topology", "metadata": _meta(q.topology),
                    "spec": {"levels": [{"nodeLabel": level} for level in q.levels]}})
    for flavor in q.flavors:
        objects.append({"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": _meta(flavor.name),
                        "spec": {"nodeLabels": dict(flavor.node_labels),
                                 "tolerations": [{"key": k, "operator": "Equal", "value": v, "effect": e}
                                                 for k, v, e in flavor.tolerations],
                                 "topologyName": flavor.topology}})
    pool = dict(q.cohort_gpus)
    objects.append({"apiVersion": API_VERSION, "kind": "Cohort", "metadata": _meta(q.cohort),
                    "spec": {"resourceGroups": [{"coveredResources": [GPU_RESOURCE],
                                                 "flavors": [_resources(f.name, pool[f.name]) for f in q.flavors]}]}})
    for team in q.queues:
        objects.append({"apiVersion": API_VERSION, "kind": "ClusterQueue", "metadata": _meta(team.team), "spec": {
            "cohortName": q.cohort,
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": team.team}},
            "queueingStrategy": "BestEffortFIFO",
            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            "fairSharing": {"weight": "1"},
            "resourceGroups": [{"coveredResources": [GPU_RESOURCE], "flavors": [
                _resources(quota.flavor, quota.nominal_gpus, quota.borrowing_limit_gpus, quota.lending_limit_gpus)
                for quota in team.quotas]}],
        }})
    for team in q.queues:
        objects.append({"apiVersion": API_VERSION, "kind": "LocalQueue", "metadata": _meta(team.team, team.team),
                        "spec": {"clusterQueue": team.team}})
    return objects


def kueue_manifests(q: QueueingPlan) -> str:
    """The objects as one YAML stream, with a header naming the topology levels (the hostname one is the
    kubelet's)."""
    head = (f"# Kueue's objects from the plan: cohort {q.cohort}, {len(q.queues)} team queue(s), topology levels"
            f" {', '.join(q.levels)}\n# ({HOSTNAME_LABEL} is the kubelet's own label; the others are the plan's)\n")
    return head + "".join(to_yaml(obj) for obj in kueue_objects(q))
