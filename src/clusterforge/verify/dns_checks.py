"""The cluster DNS's checks (CoreDNS, roles/k8s_dns), against a live API server.

The Service ``kube-dns`` holds the plan's address (every kubelet's clusterDNS) and CoreDNS's Deployment has its
planned replicas ready; then a live probe: a pod of CoreDNS's own image runs its ``cf-dns-probe``
(tools/k8s-build/coredns/cmd), which resolves ``kubernetes.default.svc.<domain>`` through the pod's
resolv.conf, as any pod would, and must get the ``kubernetes`` Service's address. `expected` is the control node's
``cf_kubernetes`` host var (clusterforge.render.ansible_inventory.kubernetes_vars).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from clusterforge.verify.layer_check import LayerCheck

__all__ = ["run_dns_checks", "dns_probe_pod", "DNS_NAMESPACE", "DNS_SERVICE", "DNS_DEPLOYMENT", "DNS_PROBE_POD",
           "DNS_PROBE"]

DNS_NAMESPACE = "kube-system"
DNS_SERVICE = "kube-dns"
DNS_DEPLOYMENT = "coredns"
DNS_PROBE_POD = "clusterforge-verify-dns"
DNS_PROBE = "/cf-dns-probe"  # in CoreDNS's image (scripts/setup-k8s.sh)
PROBE_NAMESPACE = "default"


def dns_probe_pod(name: str, image: str, names: list[str], taints: list[Mapping[str, str]]) -> Any:
    """A pod that resolves `names` (NAME or NAME=ADDRESS) with cf-dns-probe and exits 0 when all resolved;
    it tolerates `taints` (the GPU nodes', where they are the only nodes)."""
    from kubernetes import client

    tolerations = [client.V1Toleration(key=t["key"], operator="Exists", effect=t["effect"]) for t in taints]
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app.kubernetes.io/managed-by": "clusterforge"}),
        spec=client.V1PodSpec(restart_policy="Never", tolerations=tolerations or None, containers=[
            client.V1Container(name="probe", image=image, command=[DNS_PROBE, *names],
                               security_context=client.V1SecurityContext(run_as_non_root=True, run_as_user=65534))]))


def _service(core: Any, dns: Mapping[str, Any]) -> LayerCheck:
    from kubernetes.client.rest import ApiException

    try:
        ip = core.read_namespaced_service(DNS_SERVICE, DNS_NAMESPACE).spec.cluster_ip
    except ApiException as exc:
        return LayerCheck(f"service {DNS_SERVICE}", False, f"missing ({exc.status})")
    return LayerCheck(f"service {DNS_SERVICE}", ip == dns["ip"], f"cluster IP {ip}, planned {dns['ip']}")


def _deployment(apps: Any, dns: Mapping[str, Any], timeout_s: float) -> tuple[LayerCheck, str | None]:
    """The Deployment's check and its image (None where it is missing)."""
    from kubernetes.client.rest import ApiException

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            got = apps.read_namespaced_deployment(DNS_DEPLOYMENT, DNS_NAMESPACE)
        except ApiException as exc:
            return LayerCheck(f"deployment {DNS_DEPLOYMENT}", False, f"missing ({exc.status})"), None
        ready = got.status.ready_replicas or 0
        if ready >= int(dns["replicas"]) or time.monotonic() >= deadline:
            break
        time.sleep(1)
    image = got.spec.template.spec.containers[0].image
    return LayerCheck(f"deployment {DNS_DEPLOYMENT}", ready >= int(dns["replicas"]),
                      f"{ready} of {dns['replicas']} planned replicas ready ({image})"), image


def _probe(core: Any, expected: Mapping[str, Any], image: str, timeout_s: float) -> LayerCheck:
    from kubernetes.client.rest import ApiException

    name = f"kubernetes.default.svc.{expected['dns']['domain']}"
    check = f"dns resolves {name}"
    try:
        core.create_namespaced_pod(PROBE_NAMESPACE, dns_probe_pod(DNS_PROBE_POD, image, [
            f"{name}={expected['service_ip']}"], expected.get("gpu_taints") or []))
    except ApiException as exc:
        return LayerCheck(check, False, f"probe pod refused: {exc.status} {exc.reason}")
    try:
        deadline = time.monotonic() + timeout_s
        while (phase := core.read_namespaced_pod(DNS_PROBE_POD, PROBE_NAMESPACE).status.phase) not in (
                "Succeeded", "Failed") and time.monotonic() < deadline:
            time.sleep(1)
        log = ""
        if phase in ("Succeeded", "Failed"):
            log = core.read_namespaced_pod_log(DNS_PROBE_POD, PROBE_NAMESPACE, container="probe").strip()
        said = log.splitlines()[-1].removeprefix("cf-dns-probe: ") if log else ""
        return LayerCheck(check, phase == "Succeeded", said if phase == "Succeeded" else f"{phase}: {said}".strip())
    finally:
        core.delete_namespaced_pod(DNS_PROBE_POD, PROBE_NAMESPACE, grace_period_seconds=0)


def run_dns_checks(core: Any, apps: Any, expected: Mapping[str, Any], timeout_s: float) -> list[LayerCheck]:
    """The Service's address, the Deployment's ready replicas, and a pod resolving the API server's Service."""
    dns = expected.get("dns")
    if not dns:
        return [LayerCheck("cluster dns", False, "no cluster DNS in the plan (cf_kubernetes.dns): render again")]
    checks = [_service(core, dns)]
    deployment, image = _deployment(apps, dns, timeout_s)
    checks.append(deployment)
    if image is not None:
        checks.append(_probe(core, expected, image, timeout_s))
    return checks
