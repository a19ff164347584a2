"""The Kubernetes layer's checks, against a live API server (the official `kubernetes` client).

First the control plane's own (verify/control_plane_checks.py): each control node's API server and etcd member,
named, and the API through the address every kubeconfig names (the virtual one with three control nodes).
Every check is one fact with its outcome and a detail naming what differs: each planned GPU server is a
Ready node whose kubelet and container runtime report the pinned versions, advertising its planned
nvidia.com/gpu count with its planned labels; the RuntimeClass exists; the device-plugin DaemonSet is ready on
exactly the GPU nodes (or, where the nodes carry clusterforge.io/gpu-plugin=simulated, the lab's SIMULATED
plugin advertises them from each node: said so); each team's quota is the declared one (with Kueue on,
cf_kubernetes.queueing.enabled, the team's ceiling: nominal GPUs plus borrowing limit); and live probes: a pod
asking one GPU more than the smallest team's quota is refused by the API server, and on every GPU node a
one-GPU pod of the cluster registry's probe image runs in the RuntimeClass's handler, sees the GPU it was
allocated and exits 0. With k8s_gpu_mode: dra (the nodes carry clusterforge.io/gpu-api=dra) the GPUs are DRA
devices instead: each node's count is what its ResourceSlices publish, the DeviceClasses stand in for the
RuntimeClass and the device plugin, and the probe pods claim their GPU through a ResourceClaimTemplate
(verify/dra_checks.py). Last, in either mode, the cluster DNS (verify/dns_checks.py: kube-dns at the planned
address, CoreDNS ready, a pod resolving kubernetes.default.svc.<domain>). `expected` is the control node's
`cf_kubernetes` host var (clusterforge.render.ansible_inventory.kubernetes_vars).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from clusterforge.verify import dra_checks
from clusterforge.verify.dra_checks import SIMULATED_DRA
from clusterforge.verify.layer_check import LayerCheck

__all__ = ["KubeCheck", "run_kube_checks", "probe_image", "team_quotas", "DAEMONSET", "DEVICE_PLUGIN_NAMESPACE",
           "PROBE_POD"]

DAEMONSET = "nvidia-device-plugin-daemonset"
DEVICE_PLUGIN_NAMESPACE = "kube-system"
RUNTIME_CLASS = "nvidia"
QUOTA = "gpu-quota"
PROBE_POD = "clusterforge-verify-probe"
PROBE_IMAGE = "clusterforge/cf-gpu-probe:1"  # in the cluster registry (roles/k8s_registry)
SIMULATED_PLUGIN = ("clusterforge.io/gpu-plugin", "simulated")
SIMULATED_GPUS = "GPUs: nvidia.com/gpu advertised by the lab's cf-sim-gpu-plugin (the lab has no GPUs)"


def probe_image(expected: Mapping[str, Any]) -> str:
    return f"{expected['registry']['address']}/{PROBE_IMAGE}"


KubeCheck = LayerCheck


def _eventually(probe: Callable[[], Any], timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(1)


def _nodes(core: Any, expected: Mapping[str, Any], timeout_s: float,
           versions: Mapping[str, str] | None = None, dra: Callable[[str], tuple[int, int]] | None = None
           ) -> list[KubeCheck]:
    """`dra`: node -> (devices its ResourceSlices publish, of them SIMULATED), in DRA mode."""
    from kubernetes.client.rest import ApiException

    def advertised(got: Any) -> str:
        if dra is not None:
            return str(dra(got.metadata.name)[0])
        return str((got.status.capacity or {}).get("nvidia.com/gpu", "0"))

    what = "DRA devices" if dra is not None else "nvidia.com/gpu"
    out = []
    for node in expected["gpu_nodes"]:
        name, gpus = node["name"], str(node["gpu_count"])

        def read(name: str = name) -> Any:
            try:
                got = core.read_node(name)
            except ApiException:
                return None
            ready = {c.type: c.status for c in got.status.conditions or []}.get("Ready") == "True"
            return got if ready else None

        def settled(name: str = name, gpus: str = gpus) -> Any:  # a plugin registers a few seconds after a kubelet
            got = read(name)
            return got if got is not None and advertised(got) == gpus else None

        got = _eventually(settled, timeout_s) or read()
        if not got:
            out.append(KubeCheck(f"node {name}", False, "not registered or not Ready (the node left?)"))
            continue
        labels = got.metadata.labels or {}
        capacity = advertised(got)
        info = got.status.node_info
        kubelet, runtime = info.kubelet_version, info.container_runtime_version
        sim_plugin = labels.get(SIMULATED_PLUGIN[0]) == SIMULATED_PLUGIN[1]
        simulated = " (SIMULATED GPUs: the lab's device plugin)" if sim_plugin else ""
        if dra is not None:
            sim = dra(name)[1]
            simulated = f" ({sim} SIMULATED: the lab's cf-sim-dra-driver)" if sim else ""
        wrong = {k: labels.get(k) for k, v in (node.get("labels") or {}).items() if labels.get(k) != v}
        pinned = (versions or {}).get("kubelet")
        ok = capacity == gpus and not wrong and (pinned is None or kubelet == pinned) and runtime.startswith(
            "containerd://")
        detail = (f"Ready, kubelet {kubelet}{f' (pinned {pinned})' if pinned and kubelet != pinned else ''}, {runtime},"
                  f" {what} {capacity}, planned {gpus}{simulated}")
        if wrong:
            detail += f"; labels not as planned: {wrong}"
        note = (SIMULATED_DRA if dra is not None else SIMULATED_GPUS) if sim_plugin else ""
        out.append(KubeCheck(f"node {name}", ok, detail, note))
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
    simulated = [n.metadata.name for n in core.list_node(label_selector="=".join(SIMULATED_PLUGIN)).items]
    if want and sorted(simulated) == want:
        return KubeCheck("device plugin", True, "SIMULATED: cf-sim-gpu-plugin on each GPU node (no GPUs in the lab);"
                         " the node checks read what it advertises through the kubelet", SIMULATED_GPUS)

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


def team_quotas(expected: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each team's ResourceQuota as roles/k8s_gpu applies it ({"name", "gpus"}): its declared GPUs, or with Kueue
    on its ceiling (playbooks/k8s-nodes.yml makes the same choice)."""
    queueing = expected.get("queueing") or {}
    if queueing.get("enabled"):
        return [dict(t) for t in queueing["quota_ceilings"]]
    return [{"name": t["name"], "gpus": t["gpus"], "dra_devices": t.get("dra_devices") or {}}
            for t in expected["teams"]]


GPU_QUOTA_KEY = "requests.nvidia.com/gpu"
DRA_QUOTA_SUFFIX = ".deviceclass.resource.k8s.io/devices"  # the API server's key per DeviceClass (roles/k8s_gpu)


def quota_keys(team: Mapping[str, Any], classes: list[str]) -> dict[str, str]:
    """{quota key: the value roles/k8s_gpu sets} for one team: its GPUs, and with DRA each planned class's devices
    (the team's GPUs of that model, else all its GPUs: the role's template makes the same choice)."""
    devices = team.get("dra_devices") or {}
    return {GPU_QUOTA_KEY: str(team["gpus"]),
            **{f"{name}{DRA_QUOTA_SUFFIX}": str(devices.get(name, team["gpus"])) for name in classes}}


def _quotas(core: Any, expected: Mapping[str, Any], timeout_s: float, dra: bool = False) -> list[KubeCheck]:
    """The declared quota in each team's spec, and enforced: the API server's admission compares against the
    status the quota controller copies from the spec, so a check (and the probe after it) waits for that copy.
    With ``dra`` also the devices of each planned DeviceClass (what caps the GPUs a team's claims hold)."""
    from kubernetes.client.rest import ApiException

    classes = [c["name"] for c in expected.get("gpu_device_classes") or []] if dra else []
    out = []
    what = "Kueue ceiling" if (expected.get("queueing") or {}).get("enabled") else "declared"
    for team in team_quotas(expected):
        name, want = team["name"], quota_keys(team, classes)

        def hard(name: str = name, want: dict[str, str] = want) -> tuple[dict[str, Any], dict[str, Any]]:
            """(spec, enforced status) of the keys checked."""
            quota = core.read_namespaced_resource_quota(QUOTA, name)
            spec, status = quota.spec.hard or {}, (quota.status and quota.status.hard) or {}
            return {k: spec.get(k) for k in want}, {k: status.get(k) for k in want}

        try:
            found = _eventually(lambda: h if (h := hard())[0] == h[1] else None, timeout_s) or hard()
        except ApiException as exc:
            out.append(KubeCheck(f"quota {name}", False, f"missing ({exc.status})"))
            continue
        got, enforced = found
        for key, value in want.items():
            lag = ("" if got[key] == enforced[key]
                   else f" (enforced {enforced[key]}: the quota controller has not caught up)")
            label = f"quota {name}" if key == GPU_QUOTA_KEY else f"quota {name} {key.removesuffix(DRA_QUOTA_SUFFIX)}"
            out.append(KubeCheck(label, got[key] == enforced[key] == value, f"{key} {got[key]}, {what} {value}{lag}"))
    return out


def _pod(gpus: int, image: str, name: str = PROBE_POD, node: str | None = None) -> Any:
    from kubernetes import client

    resources = client.V1ResourceRequirements(requests={"nvidia.com/gpu": str(gpus)},
                                              limits={"nvidia.com/gpu": str(gpus)})
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app.kubernetes.io/managed-by": "clusterforge"}),
        spec=client.V1PodSpec(runtime_class_name=RUNTIME_CLASS, restart_policy="Never",
                              node_selector={"kubernetes.io/hostname": node} if node else None,
                              containers=[client.V1Container(name="probe", image=image, resources=resources)]))


def _probe(core: Any, expected: Mapping[str, Any], timeout_s: float) -> list[KubeCheck]:
    from kubernetes.client.rest import ApiException

    teams = [t for t in team_quotas(expected) if int(t["gpus"]) > 0]
    if not teams:
        return [KubeCheck("probe", False, "no team with GPUs declared: no namespace to run the probe pods in")]
    smallest = min(teams, key=lambda t: int(t["gpus"]))
    largest = max(teams, key=lambda t: int(t["gpus"]))
    image = probe_image(expected)
    out = []
    try:
        core.create_namespaced_pod(smallest["name"], _pod(int(smallest["gpus"]) + 1, image))
        core.delete_namespaced_pod(PROBE_POD, smallest["name"], grace_period_seconds=0)
        out.append(KubeCheck(f"probe over quota ({smallest['name']})", False,
                             f"a {int(smallest['gpus']) + 1}-GPU pod was admitted past a quota of {smallest['gpus']}"))
    except ApiException as exc:
        refused = exc.status == 403 and "exceeded quota" in str(exc.body)
        out.append(KubeCheck(f"probe over quota ({smallest['name']})", refused,
                             "refused by the API server: exceeded quota" if refused else f"{exc.status}: {exc.reason}"))
    out += _node_probes(core, largest["name"], [n["name"] for n in expected["gpu_nodes"]], image, timeout_s)
    return out


def _node_probes(core: Any, team: str, nodes: list[str], image: str, timeout_s: float) -> list[KubeCheck]:
    """A one-GPU pod of the probe image on each node (one at a time, within the team's quota): it must run in the
    RuntimeClass's handler, be given a GPU and exit 0; its log says which."""
    from kubernetes.client.rest import ApiException

    out = []
    for node in nodes:
        name = f"{PROBE_POD}-{node}"[:63].rstrip("-")
        try:
            core.create_namespaced_pod(team, _pod(1, image, name, node))
        except ApiException as exc:
            out.append(KubeCheck(f"probe pod on {node}", False, f"refused: {exc.status} {exc.reason}"))
            continue
        try:
            def done(name: str = name) -> str | None:
                phase = core.read_namespaced_pod(name, team).status.phase
                return phase if phase in ("Succeeded", "Failed") else None

            phase = _eventually(done, timeout_s)
            log = ""
            if phase:
                log = core.read_namespaced_pod_log(name, team, container="probe")
            allocated = next((ln for ln in log.splitlines() if "allocated" in ln), "").removeprefix("cf-gpu-probe: ")
            if phase == "Succeeded":
                out.append(KubeCheck(f"probe pod on {node}", True, f"ran and exited 0: {allocated}"))
            else:
                why = phase or "did not finish"
                status = core.read_namespaced_pod(name, team).status
                waiting = [c.state.waiting.reason for c in status.container_statuses or [] if c.state.waiting]
                out.append(KubeCheck(f"probe pod on {node}", False, f"{why} {waiting or ''} {log.strip()[-200:]}"))
        finally:
            core.delete_namespaced_pod(name, team, grace_period_seconds=0)
    return out


def run_kube_checks(api_client: Any, expected: Mapping[str, Any], timeout_s: float = 60.0,
                    versions: Mapping[str, str] | None = None, dns: bool = True) -> list[KubeCheck]:
    """Every check against the API server `api_client` reaches (a kubernetes.client.ApiClient); `versions`:
    the pinned component versions ({"kubelet": "v1.36.3"}), when known; `dns`: with the cluster DNS's."""
    from kubernetes import client

    from clusterforge.verify.control_plane_checks import control_plane_checks
    from clusterforge.verify.dns_checks import run_dns_checks

    core, apps, node_api = client.CoreV1Api(api_client), client.AppsV1Api(api_client), client.NodeV1Api(api_client)
    checks = control_plane_checks(api_client.configuration, expected)
    if dra_checks.gpu_api(core) == "dra":
        driver = dra_checks.driver_of(expected)

        def published(node: str) -> tuple[int, int]:
            return dra_checks.published_devices(dra_checks.read_slices(api_client), node, driver)

        checks += _nodes(core, expected, timeout_s, versions, dra=published)
        checks += dra_checks.device_class_checks(api_client, expected)
        checks += _quotas(core, expected, timeout_s, dra=True)
        checks += _dra_probe(api_client, expected, driver, timeout_s)
        if dns:
            checks += run_dns_checks(core, apps, expected, timeout_s)
        return checks
    checks += _nodes(core, expected, timeout_s, versions)
    checks.append(_runtime_class(node_api))
    checks.append(_daemonset(apps, core, expected, timeout_s))
    checks += _quotas(core, expected, timeout_s)
    checks += _probe(core, expected, timeout_s)
    if dns:
        checks += run_dns_checks(core, apps, expected, timeout_s)
    return checks


def _dra_probe(api_client: Any, expected: Mapping[str, Any], driver: str, timeout_s: float) -> list[KubeCheck]:
    """On each GPU node a pod claiming one GPU through the largest team's ResourceClaimTemplate of the node's
    model (`<model>-1`, roles/k8s_gpu)."""
    teams = [t for t in team_quotas(expected) if int(t["gpus"]) > 0]
    if not teams:
        return [KubeCheck("probe", False, "no team with GPUs declared: no namespace to run the probe pods in")]
    team = max(teams, key=lambda t: int(t["gpus"]))["name"]
    short = {c["gpu_model"]: c["short_name"] for c in expected.get("gpu_device_classes") or []}
    return [dra_checks.dra_node_probe(api_client, team, n["name"], probe_image(expected), f"{short[n['gpu_model']]}-1",
                                      driver, _eventually, timeout_s, expected.get("gpu_taints") or ())
            for n in expected["gpu_nodes"]]
