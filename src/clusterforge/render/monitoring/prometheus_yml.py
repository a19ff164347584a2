"""prometheus.yml: global intervals, Alertmanager, the rule files, one scrape job per exporter kind.

Each target is a static target with its host's identity labels (plan/monitoring.py). The node and dcgm jobs map
the exporters' own labels onto the Plan's planes and rails: node_exporter's ``device`` (an interface name the
Plan gave the GPU servers) gets ``plane`` and, on the data plane, ``rail``; dcgm-exporter's ``gpu`` gets the
rail of the NIC beside it where every GPU has one. The Kubernetes jobs read a bearer token and the cluster CA
from files the monitoring role names (they answer only over TLS, to a client allowed to read /metrics).
"""

from __future__ import annotations

import re
from typing import Any

from clusterforge.plan.monitoring import MonitoringPlan, ScrapeJob

__all__ = ["prometheus_config", "KUBERNETES_TOKEN_FILE", "KUBERNETES_CA_FILE"]

KUBERNETES_TOKEN_FILE = "/etc/prometheus/kubernetes.token"
KUBERNETES_CA_FILE = "/etc/prometheus/kubernetes-ca.crt"


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


def _job(monitoring: MonitoringPlan, job: str) -> dict[str, Any]:
    out: dict[str, Any] = {"job_name": job}
    if job in (ScrapeJob.KUBE_APISERVER, ScrapeJob.KUBELET):
        out["scheme"] = "https"
        out["authorization"] = {"credentials_file": KUBERNETES_TOKEN_FILE}
        out["tls_config"] = {"ca_file": KUBERNETES_CA_FILE}
    out["static_configs"] = [{"targets": [target.address], "labels": dict(target.labels)}
                             for target in monitoring.targets if target.job == job]
    # the instance is the host's name, not its address: alerts and dashboards name hosts as the Plan does
    out["relabel_configs"] = [{"source_labels": ["host"], "target_label": "instance"}]
    relabels = (_device_relabels(monitoring) if job == ScrapeJob.NODE
                else _gpu_relabels(monitoring) if job == ScrapeJob.DCGM else [])
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
