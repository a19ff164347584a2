"""What `verify` expects of the running monitoring, from the plan (as kubernetes_vars is for the Kubernetes checks):
where Prometheus answers, the host targets it must have up, which hosts are GPU servers, and the rule groups this
tree renders with their count of alerting rules. None for a plan without monitoring: nothing is checked there."""

from __future__ import annotations

from typing import TypedDict

from clusterforge.plan import Plan
from clusterforge.plan.monitoring import ScrapeJob
from clusterforge.render.monitoring.rules import rule_groups

__all__ = ["HOST_JOBS", "DCGM_JOB", "ExpectedTarget", "MonitoringExpected", "monitoring_expected"]

# node_exporter on every host, dcgm-exporter on the GPU servers, and where planned the API servers, the kubelets
# (with Prometheus's service account token), Kueue and cf-slurm-exporter: every target that is a host's, so all
# but Prometheus's and Alertmanager's own.
HOST_JOBS = (ScrapeJob.NODE, ScrapeJob.DCGM, ScrapeJob.KUBE_APISERVER, ScrapeJob.KUBELET, ScrapeJob.KUEUE,
             ScrapeJob.SLURM)
DCGM_JOB = ScrapeJob.DCGM  # the job whose series may be simulated (the lab's cf-sim-dcgm-exporter)


class ExpectedTarget(TypedDict):
    job: str
    host: str
    address: str  # host:port on the host's management address


class MonitoringExpected(TypedDict):
    host: str  # the monitoring host
    prometheus: str  # http://<its management address>:9090
    targets: list[ExpectedTarget]
    gpu_hosts: list[str]
    rule_groups: dict[str, int]  # group name -> alerting rules, in the rendered order


def monitoring_expected(plan: Plan) -> MonitoringExpected | None:
    monitoring = plan.monitoring
    if monitoring is None:
        return None
    return {
        "host": monitoring.host,
        "prometheus": f"http://{monitoring.address}:{monitoring.prometheus_port}",
        "targets": [{"job": t.job, "host": t.host, "address": t.address} for t in monitoring.targets
                    if t.job in HOST_JOBS],
        "gpu_hosts": list(monitoring.gpu_hosts),
        "rule_groups": {group.name: len(group.rules) for group in rule_groups(monitoring)},
    }
