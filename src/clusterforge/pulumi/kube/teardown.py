"""Remove the k8s_gpu layer `up` applied (pulumi/kube/gpu_layer.py) from the API server: what `destroy` runs.

Through the official Kubernetes Python client and the stack's admin kubeconfig (as `verify` and `roll` reach the
API server). Only what the role created goes: an object is deleted only when it carries the role's mark
(`app.kubernetes.io/managed-by=clusterforge`), a team namespace without it keeps everything but its quota
`gpu-quota`, and a node loses only the label keys and taints the role set (its other labels and taints stay; the
node itself stays: its kubelet registered it). Idempotent: something already gone, or a namespace already being
deleted, is nothing to do; the lines returned name what this call removed. Any other failure (the server does not
answer, refuses the credentials) raises TeardownFailed, one line naming the server; what was removed before it
stays removed and the next call carries on from there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from clusterforge.pulumi.kube.gpu_layer import MANAGED_BY, QUOTA_NAME, GpuLayer

__all__ = ["TeardownFailed", "api_client", "remove_layer"]

REQUEST_TIMEOUT = (5, 30)  # connect, read (seconds) per request
CONFLICT_RETRIES = 5  # a node changed between our read and our patch (409): read it again


class TeardownFailed(RuntimeError):
    pass


def api_client(kubeconfig: Mapping[str, Any]) -> Any:
    """A kubernetes.client.ApiClient for a kubeconfig (parsed), in memory; one connection attempt per request."""
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_kube_config_from_dict(dict(kubeconfig), client_configuration=configuration)
    configuration.retries = 0  # urllib3 would retry a dead server 3 times with back-off before failing
    return client.ApiClient(configuration)


class _Conflict(Exception):
    """409: the object changed since it was read (a patch guarded by its resourceVersion)."""


class _Calls:
    """Each request with its timeout; 404 is None, any other failure one TeardownFailed line naming the server."""

    def __init__(self, server: str) -> None:
        self.server = server

    def __call__(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        import urllib3
        from kubernetes.client.rest import ApiException

        try:
            return method(*args, _request_timeout=REQUEST_TIMEOUT, **kwargs)
        except ApiException as exc:
            if exc.status == 404:
                return None
            if exc.status == 409 and method.__name__.startswith("patch_"):
                raise _Conflict() from None
            raise TeardownFailed(f"the API server {self.server} refused {method.__name__}: HTTP {exc.status}"
                                 f" {exc.reason}") from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:  # connection, TLS, timeouts: no answer
            why = str(getattr(exc, "reason", None) or exc).splitlines()[0][:200]
            raise TeardownFailed(f"the API server {self.server} cannot be reached ({why});"
                                 " nothing more was removed, `destroy` again carries on") from None


def _marked(obj: Any) -> bool:
    return (obj.metadata.labels or {}).get(MANAGED_BY[0]) == MANAGED_BY[1]


def _delete(call: _Calls, read: Callable[..., Any], delete: Callable[..., Any], args: tuple[str, ...], what: str,
            say: Callable[[str], Any], **options: Any) -> str | None:
    obj = call(read, *args)
    if obj is None or obj.metadata.deletion_timestamp is not None:
        return None
    if not _marked(obj):
        say(f"kept {what}: not labelled {MANAGED_BY[0]}={MANAGED_BY[1]}, so not created by clusterforge")
        return None
    return f"deleted {what}" if call(delete, *args, **options) is not None else None


def _unlabel_node(call: _Calls, core: Any, node: str, layer: GpuLayer) -> str | None:
    """Drop the layer's label keys and taints from one node (a strategic merge patch guarded by resourceVersion)."""
    planned = set(layer.taints)
    for _ in range(CONFLICT_RETRIES):
        got = call(core.read_node, node)
        if got is None:
            return None
        labels = sorted(key for key in layer.labels if key in (got.metadata.labels or {}))
        taints = got.spec.taints or []
        kept = [t for t in taints if (t.key, t.value or "", t.effect) not in planned]
        if not labels and len(kept) == len(taints):
            return None
        body = {"metadata": {"resourceVersion": got.metadata.resource_version, "labels": dict.fromkeys(labels)},
                "spec": {"taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in kept] or None}}
        try:
            call(core.patch_node, node, body)
        except _Conflict:
            continue
        removed = [f"label {key}" for key in labels] + [
            f"taint {t.key}={t.value or ''}:{t.effect}" for t in taints if t not in kept]
        return f"node {node}: removed {', '.join(removed)}"
    raise TeardownFailed(f"the API server {call.server}: node {node} kept changing under {CONFLICT_RETRIES} patches")


def remove_layer(api: Any, layer: GpuLayer, server: str, say: Callable[[str], Any] = lambda _line: None
                 ) -> list[str]:
    """Remove `layer` through `api` (an ApiClient); returns one line per thing removed, in the order removed.
    `say` hears each line as it happens, and each object kept because the role did not create it."""
    from kubernetes import client

    apps, core, node_api = client.AppsV1Api(api), client.CoreV1Api(api), client.NodeV1Api(api)
    call = _Calls(server)
    removed: list[str] = []

    def done(line: str | None) -> None:
        if line:
            removed.append(line)
            say(line)

    background = {"propagation_policy": "Background"}
    done(_delete(call, apps.read_namespaced_daemon_set, apps.delete_namespaced_daemon_set,
                 (layer.daemonset, layer.namespace), f"DaemonSet {layer.namespace}/{layer.daemonset}", say,
                 **background))
    if layer.configmap:
        done(_delete(call, core.read_namespaced_config_map, core.delete_namespaced_config_map,
                     (layer.configmap, layer.namespace), f"ConfigMap {layer.namespace}/{layer.configmap}", say))
    if layer.runtime_class:
        done(_delete(call, node_api.read_runtime_class, node_api.delete_runtime_class, (layer.runtime_class,),
                     f"RuntimeClass {layer.runtime_class}", say))
    for team in layer.teams:
        namespace = call(core.read_namespace, team)
        if namespace is not None and not _marked(namespace):  # not ours: only our quota in it goes
            done(_delete(call, core.read_namespaced_resource_quota, core.delete_namespaced_resource_quota,
                         (QUOTA_NAME, team), f"ResourceQuota {team}/{QUOTA_NAME}", say))
        done(_delete(call, core.read_namespace, core.delete_namespace, (team,),
                     f"Namespace {team} (and its ResourceQuota {QUOTA_NAME})", say, **background))
    for node in layer.nodes:
        done(_unlabel_node(call, core, node, layer))
    return removed
