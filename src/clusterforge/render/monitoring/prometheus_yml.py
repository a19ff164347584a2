"""prometheus.yml: global intervals, Alertmanager, the rule files, one scrape job per exporter kind.

Each target is a static target with its host's identity labels (plan/monitoring.py). The node and dcgm jobs map
the exporters' own labels onto the Plan's planes and rails: node_exporter's ``device`` (an interface name the
Plan gave the GPU servers) gets ``plane`` and, on the data plane, ``rail``; dcgm-exporter's ``gpu`` gets the
rail of the NIC beside it where every GPU has one. The kueue job's ``cluster_queue`` and the slurm job's
``account`` get ``team`` where they name a declared team (the plan names both after the teams).

The Kubernetes jobs (kube-apiserver, kubelet, kueue) answer only over TLS, to a client allowed to read /metrics:
they send the token of the cluster's ``prometheus`` service account (roles/monitoring writes it, 0640, from the
Secret it makes in kube-system; never rendered). The API servers are verified against the cluster CA, Kueue
against its own self-signed serving certificate (roles/k8s_kueue's; the monitoring role copies it). The kubelets'
serving certificates are self-signed per host for their host name (no serverTLSBootstrap), which a scrape by
address cannot verify: that job skips verification, and its token can read metrics only (ClusterRole
``clusterforge:prometheus``: GET /metrics and nodes/metrics, never nodes/proxy).
"""

from __future__ import annotations

import re
from typing import Any

from clusterforge.plan.monitoring import MonitoringPlan, ScrapeJob

__all__ = ["prometheus_config", "KUBERNETES_TOKEN_FILE", "KUBERNETES_CA_FILE", "KUEUE_CA_FILE", "TEAM_LABELS"]

KUBERNETES_TOKEN_FILE = "/etc/prometheus/kubernetes.token"
KUBERNETES_CA_FILE = "/etc/prometheus/kubernetes-ca.crt"
KUEUE_CA_FILE = "/etc/prometheus/kueue-ca.crt"
# the label naming a team in each job's own series: Kueue's ClusterQueue, Slurm's account (cf-slurm-exporter)
TEAM_LABELS = {ScrapeJob.KUEUE: "cluster_queue", ScrapeJob.SLURM: "account"}


def _device_relabels(monitoring: MonitoringPlan) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for iface in monitoring.interfaces:
        regex = re.escape(iface.device)  # an interface name (NIC-name grammar): letters, digits, '_', '.', '-'
        out.append({"source_labels": ["device"], "regex": regex, "target_label": "plane",
                    "replacement": iface.plane})
        if iface.rail is not None:
            out.append({"source_labels": ["device"], "regex": regex, "target_label": "rail",
                        "replacement": str(iface.rail)})
    return out


def _gpu_relabels(monitoring: MonitoringPlan) -> list[dict[str, Any]]:
    return [{"source_labels": ["gpu"], "regex": str(gpu), "target_label": "rail", "replacement": str(rail)}
            for gpu, rail in monitoring.gpu_rails]


def _team_relabels(monitoring: MonitoringPlan, source: str) -> list[dict[str, Any]]:
    return [{"source_labels": [source], "regex": re.escape(team), "target_label": "team", "replacement": team}
            for team in monitoring.teams]


_TLS: dict[str, dict[str, Any]] = {
    ScrapeJob.KUBE_APISERVER: {"ca_file": KUBERNETES_CA_FILE},
    ScrapeJob.KUBELET: {"insecure_skip_verify": True},  # self-signed per host: see the module's docstring
    ScrapeJob.KUEUE: {"ca_file": KUEUE_CA_FILE},
}


def _job(monitoring: MonitoringPlan, job: str) -> dict[str, Any]:
    out: dict[str, Any] = {"job_name": job}
    if job in _TLS:
        out["scheme"] = "https"
        out["authorization"] = {"credentials_file": KUBERNETES_TOKEN_FILE}
        out["tls_config"] = dict(_TLS[job])
    out["static_configs"] = [{"targets": [target.address], "labels": dict(target.labels)}
                             for target in monitoring.targets if target.job == job]
    # the instance is the host's name, not its address: alerts and dashboards name hosts as the Plan does
    out["relabel_configs"] = [{"source_labels": ["host"], "target_label": "instance"}]
    relabels = (_device_relabels(monitoring) if job == ScrapeJob.NODE
                else _gpu_relabels(monitoring) if job == ScrapeJob.DCGM
                else _team_relabels(monitoring, TEAM_LABELS[job]) if job in TEAM_LABELS else [])
    if relabels:
        out["metric_relabel_configs"] = relabels
    return out


def prometheus_config(monitoring: MonitoringPlan, cluster: str, rule_files: list[str]) -> dict[str, Any]:
    interval = f"{monitoring.scrape_interval_s}s"
    return {
        "global": {"scrape_interval": interval, "evaluation_interval": interval,
                   "external_labels": {"cluster": cluster}},
        "alerting": {"alertmanagers": [{"static_configs": [
            {"targets": [f"{monitoring.address}:{monitoring.alertmanager_port}"]}]}]},
        "rule_files": rule_files,
        "scrape_configs": [_job(monitoring, job) for job in monitoring.jobs()],
    }
