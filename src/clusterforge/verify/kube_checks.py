"""The Kubernetes layer's checks, against a live API server (the official `kubernetes` client).

Every check is one fact with its outcome and a detail naming what differs: each planned GPU server is a
Ready node advertising its planned nvidia.com/gpu count, the RuntimeClass exists, the device-plugin
DaemonSet is ready on exactly the GPU nodes, each team's quota is the declared one, and a live probe:
a pod asking one GPU more than the smallest team's quota is refused by the API server, and a one-GPU pod
in the largest team is bound to a GPU node. `expected` is the control node's `cf_kubernetes` host var
(clusterforge.render.ansible_inventory.kubernetes_vars). In the lab the kubelets are simulated (kwok);
the checks say so when a node carries clusterforge.io/kubelet=simulated.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from clusterforge.verify.layer_check import LayerCheck

__all__ = ["KubeCheck", "run_kube_checks", "DAEMONSET", "DEVICE_PLUGIN_NAMESPACE", "PROBE_POD"]

DAEMONSET = "nvidia-device-plugin-daemonset"
DEVICE_PLUGIN_NAMESPACE = "kube-system"
RUNTIME_CLASS = "nvidia"
QUOTA = "gpu-quota"
PROBE_POD = "clusterforge-verify-probe"
PROBE_IMAGE = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"


KubeCheck = LayerCheck


def _eventually(probe: Callable[[], Any], timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(1)


def _nodes(core: Any, expected: Mapping[str, Any], timeout_s: float) -> list[KubeCheck]:
    from kubernetes.client.rest import ApiException

    out = []
    for node in expected["gpu_nodes"]:
        name, gpus = node["name"], str(node["gpu_count"])

        def state(name: str = name) -> tuple[str, str, bool] | None:
            try:
                got = core.read_node(name)
            except ApiException as exc:
                return None if exc.status == 404 else ("error", str(exc.status), False)
            ready = {c.type: c.status for c in got.status.conditions or []}.get("Ready") == "True"
            simulated = (got.metadata.labels or {}).get("clusterforge.io/kubelet") == "simulated"
            return (("Ready" if ready else "NotReady"), (got.status.capacity or {}).get("nvidia.com/gpu", "0"),
                    simulated) if ready else None

        found = _eventually(state, timeout_s)
        if found is None:
            out.append(KubeCheck(f"node {name}", False, "not registered or not Ready (the node left?)"))
            continue
        readiness, capacity, simulated = found
        kubelet = " (simulated kubelet)" if simulated else ""
        out.append(KubeCheck(f"node {name}", readiness == "Ready" and capacity == gpus,
                             f"{readiness}{kubelet}, nvidia.com/gpu {capacity}, planned {gpus}"))
    return out


def _runtime_class(node_api: Any) -> KubeCheck:
    from kubernetes.client.rest import ApiException

    try:
        handler = node_api.read_runtime_class(RUNTIME_CLASS).handler
    except ApiException as exc:
        return KubeCheck(f"runtimeclass {RUNTIME_CLASS}", False, f"missing ({exc.status})")
    return KubeCheck(f"runtimeclass {RUNTIME_CLASS}", handler == "nvidia", f"handler {handler}")


def _daemonset(apps: Any, core: Any, expected: Mapping[str, Any], timeout_s: float) -> KubeCheck:
    from kubernetes.client.rest import ApiException

    want = sorted(n["name"] for n in expected["gpu_nodes"])

    def rolled_out() -> tuple[int, int, list[str]] | None:
        try:
            daemonset = apps.read_namespaced_daemon_set(DAEMONSET, DEVICE_PLUGIN_NAMESPACE)
        except ApiException:
            return None
        status = daemonset.status
        # a status the controller wrote before the current spec says nothing about that spec
        if (status.observed_generation or 0) < (daemonset.metadata.generation or 0):
            return None
        pods = core.list_namespaced_pod(DEVICE_PLUGIN_NAMESPACE, label_selector="name=nvidia-device-plugin-ds")
        nodes = sorted(p.spec.node_name for p in pods.items
                       if p.spec.node_name and p.metadata.deletion_timestamp is None)
        desired = status.desired_number_scheduled or 0
        found = (desired, status.number_ready or 0, nodes)
        current = (status.updated_number_scheduled or 0) == desired
        return found if current and found[0] == found[1] == len(want) and nodes == want else None

    found = _eventually(rolled_out, timeout_s)
    if found is None:
        try:
            status = apps.read_namespaced_daemon_set(DAEMONSET, DEVICE_PLUGIN_NAMESPACE).status
            detail = (f"desired {status.desired_number_scheduled}, ready {status.number_ready},"
                      f" GPU nodes {len(want)}")
        except ApiException as exc:
            detail = f"missing ({exc.status})"
        return KubeCheck(f"daemonset {DAEMONSET}", False, detail)
    return KubeCheck(f"daemonset {DAEMONSET}", True, f"desired {found[0]} == ready {found[1]} on the GPU nodes")


def _quotas(core: Any, expected: Mapping[str, Any], timeout_s: float) -> list[KubeCheck]:
    """The declared quota in each team's spec, and enforced: the API server's admission compares against the
    status the quota controller copies from the spec, so a check (and the probe after it) waits for that copy."""
    from kubernetes.client.rest import ApiException

    key = "requests.nvidia.com/gpu"
    out = []
    for team in expected["teams"]:
        name = team["name"]

        def hard(name: str = name) -> tuple[str | None, str | None]:  # (spec, enforced status)
            quota = core.read_namespaced_resource_quota(QUOTA, name)
            return (quota.spec.hard or {}).get(key), ((quota.status and quota.status.hard) or {}).get(key)

        try:
            found = _eventually(lambda: h if (h := hard())[0] == h[1] else None, timeout_s) or hard()
        except ApiException as exc:
            out.append(KubeCheck(f"quota {name}", False, f"missing ({exc.status})"))
            continue
        got, enforced = found
        lag = "" if got == enforced else f" (enforced {enforced}: the quota controller has not caught up)"
        out.append(KubeCheck(f"quota {name}", got == enforced == str(team["gpus"]),
                             f"{key} {got}, declared {team['gpus']}{lag}"))
    return out


def _pod(gpus: int) -> Any:
    from kubernetes import client

    resources = client.V1ResourceRequirements(requests={"nvidia.com/gpu": str(gpus)},
                                              limits={"nvidia.com/gpu": str(gpus)})
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=PROBE_POD, labels={"app.kubernetes.io/managed-by": "clusterforge"}),
        spec=client.V1PodSpec(runtime_class_name=RUNTIME_CLASS, restart_policy="Never",
                              containers=[client.V1Container(name="probe", image=PROBE_IMAGE, resources=resources)]))


def _probe(core: Any, expected: Mapping[str, Any], timeout_s: float) -> list[KubeCheck]:
    from kubernetes.client.rest import ApiException

    teams = [t for t in expected["teams"] if int(t["gpus"]) > 0]
    if not teams:
        return [KubeCheck("probe", True, "no team quota declared: nothing to probe")]
    smallest = min(teams, key=lambda t: int(t["gpus"]))
    largest = max(teams, key=lambda t: int(t["gpus"]))
    out = []
    try:
        core.create_namespaced_pod(smallest["name"], _pod(int(smallest["gpus"]) + 1))
        core.delete_namespaced_pod(PROBE_POD, smallest["name"], grace_period_seconds=0)
        out.append(KubeCheck(f"probe over quota ({smallest['name']})", False,
                             f"a {int(smallest['gpus']) + 1}-GPU pod was admitted past a quota of {smallest['gpus']}"))
    except ApiException as exc:
        refused = exc.status == 403 and "exceeded quota" in str(exc.body)
        out.append(KubeCheck(f"probe over quota ({smallest['name']})", refused,
                             "refused by the API server: exceeded quota" if refused else f"{exc.status}: {exc.reason}"))
    gpu_nodes = {n["name"] for n in expected["gpu_nodes"]}
    try:
        core.create_namespaced_pod(largest["name"], _pod(1))
    except ApiException as exc:
        out.append(KubeCheck(f"probe within quota ({largest['name']})", False, f"refused: {exc.status} {exc.reason}"))
        return out
    try:
        node = _eventually(lambda: core.read_namespaced_pod(PROBE_POD, largest["name"]).spec.node_name, timeout_s)
        out.append(KubeCheck(f"probe within quota ({largest['name']})", node in gpu_nodes,
                             f"bound to {node}" if node else "never scheduled"))
    finally:
        core.delete_namespaced_pod(PROBE_POD, largest["name"], grace_period_seconds=0)
    return out


def run_kube_checks(api_client: Any, expected: Mapping[str, Any], timeout_s: float = 60.0) -> list[KubeCheck]:
    """Every check against the API server `api_client` reaches (a kubernetes.client.ApiClient)."""
    from kubernetes import client

    core, apps, node_api = client.CoreV1Api(api_client), client.AppsV1Api(api_client), client.NodeV1Api(api_client)
    checks = _nodes(core, expected, timeout_s)
    checks.append(_runtime_class(node_api))
    checks.append(_daemonset(apps, core, expected, timeout_s))
    checks += _quotas(core, expected, timeout_s)
    checks += _probe(core, expected, timeout_s)
    return checks
