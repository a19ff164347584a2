"""The cluster DNS on the lab (CoreDNS, roles/k8s_dns): its replicas on distinct nodes behind kube-dns at the
planned address, a pod of a team namespace resolving the API server's Service and a Service of its namespace
(full names and short ones through the kubelet's search path), and nothing outside the cluster domain (the lab
forwards nowhere: no packet leaves 198.18.0.0/15). One cluster per session (the kube_cluster fixture)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab]

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import CoreV1Api  # noqa: E402


def _plan():
    from clusterforge.loading import load_and_plan

    return load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")


SPEC, PLAN = _plan()[:2]
TEAM = max(SPEC.teams, key=lambda t: t.gpus).name
TARGET = "cf-dns-target"


def _run(core, name: str, names: list[str], image: str, timeout_s: float = 90.0) -> tuple[str, str]:
    """(phase, log) of a cf-dns-probe pod in the team's namespace resolving `names`; the pod is deleted."""
    from clusterforge.render.ansible_inventory import kubernetes_vars
    from clusterforge.verify.dns_checks import dns_probe_pod

    core.create_namespaced_pod(TEAM, dns_probe_pod(name, image, names, kubernetes_vars(PLAN)["gpu_taints"]))
    try:
        deadline = time.monotonic() + timeout_s
        while (phase := core.read_namespaced_pod(name, TEAM).status.phase) not in ("Succeeded", "Failed") \
                and time.monotonic() < deadline:
            time.sleep(1)
        log = core.read_namespaced_pod_log(name, TEAM) if phase in ("Succeeded", "Failed") else ""
        return phase, log
    finally:
        core.delete_namespaced_pod(name, TEAM, grace_period_seconds=0)


def test_pods_resolve_cluster_names_and_nothing_else(kube_cluster):
    m = kubernetes.client
    core = CoreV1Api(kube_cluster.api)
    dns = PLAN.kubernetes.dns
    assert dns is not None and dns.ip == PLAN.kubernetes.dns_ip
    service = core.read_namespaced_service("kube-dns", "kube-system")
    assert service.spec.cluster_ip == dns.ip
    pods = core.list_namespaced_pod("kube-system", label_selector="k8s-app=kube-dns").items
    running = [p for p in pods if p.status.phase == "Running" and p.metadata.deletion_timestamp is None]
    assert len(running) == dns.replicas == 2 and len({p.spec.node_name for p in running}) == 2, \
        [(p.metadata.name, p.spec.node_name, p.status.phase) for p in pods]
    image = running[0].spec.containers[0].image
    from clusterforge.render.ansible_inventory import kubernetes_vars

    assert image.startswith(f"{kubernetes_vars(PLAN)['registry']['address']}/clusterforge/coredns:"), image

    core.create_namespaced_service(TEAM, m.V1Service(metadata=m.V1ObjectMeta(name=TARGET), spec=m.V1ServiceSpec(
        ports=[m.V1ServicePort(port=80)])))  # no selector: a cluster IP and a name, no endpoints needed
    try:
        target = core.read_namespaced_service(TARGET, TEAM).spec.cluster_ip
        api = PLAN.kubernetes.service_ip
        phase, log = _run(core, "dns-probe", [
            f"kubernetes.default.svc.{dns.domain}={api}", f"kubernetes.default={api}",
            f"{TARGET}.{TEAM}.svc.{dns.domain}={target}", f"{TARGET}={target}"], image)
        assert phase == "Succeeded", log
        assert f"cf-dns-probe: {TARGET} resolved to {target}" in log, log
        # the cluster domain answers only what exists; outside it the lab forwards nowhere
        phase, log = _run(core, "dns-probe-absent", [f"absent.{TEAM}.svc.{dns.domain}", "example.com."], image)
        assert phase == "Failed", log
        assert "absent" in log and "resolved to" not in log, log
    finally:
        core.delete_namespaced_service(TARGET, TEAM)
