"""The Kubernetes checks of k8s_gpu_mode: dra (GPUs as Dynamic Resource Allocation devices, resource.k8s.io/v1).

The nodes of that mode carry ``clusterforge.io/gpu-api=dra`` (playbooks/k8s-nodes.yml sets it). Each planned GPU
node must publish, in the ResourceSlices of the DRA driver the DeviceClasses select (plan/dra.py), exactly its
planned GPU count; in the lab the devices are SIMULATED (cf-sim-dra-driver: attribute ``simulated``), said so.
Each planned DeviceClass exists. The probe: on every GPU node a pod of the cluster registry's probe image claims
one GPU through the team's ``<model>-1`` ResourceClaimTemplate and exits 0; the claim's status names the device
the scheduler allocated on that node (with containerd 1.6, which has no CDI, the container itself sees no
device: the claim is the proof, and the driver prepared it before the container started).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from clusterforge.verify.layer_check import LayerCheck

__all__ = ["DRA_LABEL", "SIMULATED_DRA", "published_devices", "claim_devices", "gpu_api", "read_slices",
           "device_class_checks", "dra_probe_pod", "dra_node_probe"]

DRA_LABEL = ("clusterforge.io/gpu-api", "dra")
SIMULATED_DRA = "GPUs: DRA devices published by the lab's cf-sim-dra-driver (the lab has no GPUs)"
PROBE_CLAIM = "gpu"
DEFAULT_DRIVER = "gpu.nvidia.com"  # the plan's (plan/dra.py), where expected names no DeviceClass


def published_devices(slices: Iterable[Mapping[str, Any]], node: str, driver: str) -> tuple[int, int]:
    """(devices, of them SIMULATED) that ``driver`` publishes for ``node`` in ResourceSlice objects (as JSON):
    only the newest generation of each pool counts, as the scheduler reads them."""
    newest: dict[str, int] = {}
    mine = [s for s in slices if (s.get("spec") or {}).get("driver") == driver
            and (s.get("spec") or {}).get("nodeName") == node]
    for s in mine:
        pool = s["spec"].get("pool") or {}
        newest[pool.get("name", "")] = max(newest.get(pool.get("name", ""), 0), int(pool.get("generation", 0)))
    devices = simulated = 0
    for s in mine:
        pool = s["spec"].get("pool") or {}
        if int(pool.get("generation", 0)) != newest[pool.get("name", "")]:
            continue
        for device in s["spec"].get("devices") or []:
            devices += 1
            attribute = (device.get("attributes") or {}).get("simulated") or {}
            simulated += attribute.get("bool") is True
    return devices, simulated


def claim_devices(claim: Mapping[str, Any], driver: str) -> list[tuple[str, str]]:
    """(pool, device) of each device a ResourceClaim (as JSON) was allocated from ``driver``."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return [(r.get("pool", ""), r.get("device", "")) for r in (allocation.get("devices") or {}).get("results") or []
            if r.get("driver") == driver]


def gpu_api(core: Any) -> str:
    """'dra' where the nodes carry the DRA mark (playbooks/k8s-nodes.yml), else 'device-plugin'."""
    marked = core.list_node(label_selector="=".join(DRA_LABEL)).items
    return "dra" if marked else "device-plugin"


def driver_of(expected: Mapping[str, Any]) -> str:
    classes = expected.get("gpu_device_classes") or []
    return str(classes[0].get("driver", DEFAULT_DRIVER)) if classes else DEFAULT_DRIVER


def read_slices(api_client: Any) -> list[dict[str, Any]]:
    """Every ResourceSlice, as JSON (the client's models lag the API's fields)."""
    from kubernetes import client

    resource: Any = client.ResourceV1Api(api_client)
    response = resource.list_resource_slice(_preload_content=False)
    return list(json.loads(response.data).get("items") or [])


def device_class_checks(api_client: Any, expected: Mapping[str, Any]) -> list[LayerCheck]:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    out = []
    resource = client.ResourceV1Api(api_client)
    for cls in expected.get("gpu_device_classes") or []:
        try:
            resource.read_device_class(cls["name"], _preload_content=False)
            out.append(LayerCheck(f"deviceclass {cls['name']}", True, f"selects {cls['product']} of {cls['driver']}"))
        except ApiException as exc:
            out.append(LayerCheck(f"deviceclass {cls['name']}", False, f"missing ({exc.status})"))
    if not out:
        out.append(LayerCheck("deviceclasses", False, "the plan has no DeviceClass (no GPU node)"))
    return out


def dra_probe_pod(name: str, image: str, template: str, node: str,
                  taints: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """A pod of the probe image claiming one GPU through the team's ResourceClaimTemplate ``template``, tolerating
    the GPU nodes' ``taints`` (expected's gpu_taints: no RuntimeClass brings them in DRA mode)."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "clusterforge"}},
            "spec": {"restartPolicy": "Never", "nodeSelector": {"kubernetes.io/hostname": node},
                     "tolerations": [{"key": t["key"], "operator": "Exists", "effect": t["effect"]} for t in taints],
                     "resourceClaims": [{"name": PROBE_CLAIM, "resourceClaimTemplateName": template}],
                     "containers": [{"name": "probe", "image": image, "args": ["--dra"],
                                     "resources": {"claims": [{"name": PROBE_CLAIM}]}}]}}


def dra_node_probe(api_client: Any, team: str, node: str, image: str, template: str, driver: str,
                   eventually: Callable[[Callable[[], Any], float], Any], timeout_s: float,
                   taints: Iterable[Mapping[str, Any]] = ()) -> LayerCheck:
    """One DRA probe pod on ``node``: it must exit 0 with its claim allocated a device of ``node``'s pool. The
    claim's allocation is read from the watch of the namespace's claims since before the pod: once the pod has
    ended, the resource claim controller may deallocate and delete its generated claim at any moment."""
    from kubernetes import client, watch
    from kubernetes.client.rest import ApiException

    core: Any = client.CoreV1Api(api_client)
    custom: Any = client.CustomObjectsApi(api_client)
    claims_of = ("resource.k8s.io", "v1", team, "resourceclaims")
    name = f"clusterforge-verify-dra-{node}"[:63].rstrip("-")
    check = f"probe pod on {node}"
    try:
        since = custom.list_namespaced_custom_object(*claims_of)["metadata"]["resourceVersion"]
        core.create_namespaced_pod(team, dra_probe_pod(name, image, template, node, taints))
    except ApiException as exc:
        return LayerCheck(check, False, f"refused: {exc.status} {exc.reason}")
    try:
        def done() -> str | None:
            phase = core.read_namespaced_pod(name, team).status.phase
            return phase if phase in ("Succeeded", "Failed") else None

        phase = eventually(done, timeout_s)
        pod = core.read_namespaced_pod(name, team)
        claims = [s.resource_claim_name for s in pod.status.resource_claim_statuses or [] if s.resource_claim_name]
        allocated: dict[str, list[tuple[str, str]]] = {}
        for event in watch.Watch().stream(custom.list_namespaced_custom_object, *claims_of, resource_version=since,
                                          timeout_seconds=3):
            claim = event["object"]
            got = claim_devices(claim, driver)
            if claim.get("metadata", {}).get("name") in claims and got:
                allocated[claim["metadata"]["name"]] = got
        devices = [d for found in allocated.values() for d in found]
        log = core.read_namespaced_pod_log(name, team, container="probe") if phase else ""
        seen = next((ln for ln in log.splitlines() if "allocated" in ln), "").removeprefix("cf-gpu-probe: ")
        on_node = [d for pool, d in devices if pool == node]
        ok = phase == "Succeeded" and len(devices) == 1 and len(on_node) == 1
        detail = (f"{phase or 'did not finish'}; claim {', '.join(claims) or '(none)'} allocated"
                  f" {', '.join(f'{p}/{d}' for p, d in devices) or 'nothing'}; the container: {seen or log[-200:]}")
        return LayerCheck(check, ok, detail)
    finally:
        core.delete_namespaced_pod(name, team, grace_period_seconds=0)
