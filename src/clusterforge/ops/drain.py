"""Drain a Kubernetes node through the Eviction API, as `kubectl drain` does, and uncordon it.

Cordon (spec.unschedulable), then evict every pod bound to the node except DaemonSet pods (their
controller would place them back) and mirror pods: each eviction is a policy/v1 Eviction, so the API
server honours PodDisruptionBudgets. An eviction a budget refuses (429) is retried until the timeout;
then the drain stops and names every blocked pod and why, never deleting it by force. Evicted pods
are waited for until they are gone from the node. Used by `roll` and `replace` (official `kubernetes`
client; imported lazily, this module imports nothing of clusterforge).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DrainBlocked", "DrainResult", "cordon", "drain", "uncordon"]


class DrainBlocked(RuntimeError):
    def __init__(self, node: str, blocked: dict[str, str]) -> None:
        self.node, self.blocked = node, blocked
        names = "; ".join(f"{pod}: {why}" for pod, why in sorted(blocked.items()))
        super().__init__(f"draining {node} is blocked: {names}")


@dataclass(frozen=True)
class DrainResult:
    node: str
    evicted: tuple[str, ...]  # namespace/name
    skipped: tuple[str, ...] = field(default=())  # DaemonSet and mirror pods


def _set_unschedulable(core: Any, node: str, value: bool) -> None:
    core.patch_node(node, {"spec": {"unschedulable": value or None}})


def cordon(core: Any, node: str) -> None:
    _set_unschedulable(core, node, True)


def uncordon(core: Any, node: str) -> None:
    _set_unschedulable(core, node, False)


def _evictable(pod: Any) -> bool:
    owners = pod.metadata.owner_references or []
    mirror = "kubernetes.io/config.mirror" in (pod.metadata.annotations or {})
    finished = pod.status.phase in ("Succeeded", "Failed")
    return not mirror and not finished and not any(o.kind == "DaemonSet" for o in owners)


def drain(core: Any, node: str, timeout_s: float = 300.0, say: Callable[[str], Any] = lambda _line: None
          ) -> DrainResult:
    """Cordon `node` and evict its pods (core: a kubernetes.client.CoreV1Api). Raises DrainBlocked."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    cordon(core, node)
    say(f"{node}: cordoned")
    pods = core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}").items
    targets = [p for p in pods if _evictable(p)]
    skipped = tuple(f"{p.metadata.namespace}/{p.metadata.name}" for p in pods if not _evictable(p))
    pending = {(p.metadata.namespace, p.metadata.name): p.metadata.uid for p in targets}
    blocked: dict[str, str] = {}
    deadline = time.monotonic() + timeout_s
    to_evict = dict(pending)
    while to_evict and time.monotonic() < deadline:
        for (namespace, name) in list(to_evict):
            body = client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace=namespace))
            try:
                core.create_namespaced_pod_eviction(name, namespace, body)
            except ApiException as exc:
                if exc.status == 404:  # already gone
                    to_evict.pop((namespace, name))
                    continue
                if exc.status == 429:  # a PodDisruptionBudget says not now
                    blocked[f"{namespace}/{name}"] = _reason(exc)
                    continue
                raise
            blocked.pop(f"{namespace}/{name}", None)
            to_evict.pop((namespace, name))
            say(f"{node}: evicted {namespace}/{name}")
        if to_evict:
            time.sleep(2)
    if to_evict:
        raise DrainBlocked(node, {f"{ns}/{n}": blocked.get(f"{ns}/{n}", "not evicted in time") for ns, n in to_evict})
    while pending and time.monotonic() < deadline:
        for (namespace, name), uid in list(pending.items()):
            try:
                pod = core.read_namespaced_pod(name, namespace)
            except ApiException as exc:
                if exc.status != 404:
                    raise
                pending.pop((namespace, name))
                continue
            if pod.metadata.uid != uid:
                pending.pop((namespace, name))
        if pending:
            time.sleep(1)
    if pending:
        raise DrainBlocked(node, {f"{ns}/{n}": "evicted but still terminating" for ns, n in pending})
    return DrainResult(node, tuple(f"{ns}/{n}" for ns, n in (k for k in _keys(targets))), skipped)


def _keys(pods: list[Any]) -> list[tuple[str, str]]:
    return [(p.metadata.namespace, p.metadata.name) for p in pods]


def _reason(exc: Any) -> str:
    import json

    try:
        return str(json.loads(exc.body).get("message") or exc.reason)
    except (TypeError, ValueError):
        return str(exc.reason)
