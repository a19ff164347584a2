"""The monitoring layer's checks, against the live Prometheus through its HTTP API on the monitoring host's
management address (plan.monitoring: the control node, port 9090): every planned host's node_exporter and every
GPU server's dcgm-exporter an ``up`` target (/api/v1/targets), the loaded rule groups the planned ones with the
planned number of alerting rules each (/api/v1/rules). The comparisons are plan/verify_monitoring.py's; the GPU
series of a dcgm target are asked (/api/v1/query) whether they are simulated, and on the lab they are (the
cf-sim-dcgm-exporter): those checks are SIMULATED, never passed.

Not planned, not checked: a declaration without a monitoring host (no control node) gets no monitoring layer."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from clusterforge.plan import Plan
from clusterforge.plan.monitoring import MonitoringPlan, ScrapeJob
from clusterforge.plan.verify_monitoring import rule_checks, target_checks
from clusterforge.schedulers.driver import LayerChecks
from clusterforge.targets import Reach
from clusterforge.verify.layer_check import LayerCheck

__all__ = ["TITLE", "prometheus_url", "planned_rules", "run_monitoring_checks", "monitoring_layer",
           "PrometheusUnreachable"]

TITLE = "monitoring layer (Prometheus's targets and rules; lab: SIMULATED GPU series)"
SIMULATED_QUERY = f'count by (host) ({{job="{ScrapeJob.DCGM}",__name__=~"DCGM_.+",simulated="true"}})'
_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the management plane, never through a proxy


class PrometheusUnreachable(RuntimeError):
    """Prometheus did not answer, or answered something that is not its API's JSON."""


def prometheus_url(monitoring: MonitoringPlan) -> str:
    return f"http://{monitoring.address}:{monitoring.prometheus_port}"


def planned_rules(monitoring: MonitoringPlan) -> dict[str, int]:
    """Alerting rules per group, as render/monitoring renders them for this plan."""
    from clusterforge.render.monitoring.rules import rule_groups

    return {group.name: len(group.rules) for group in rule_groups(monitoring)}


def _api(base: str, path: str, request_timeout_s: float) -> Any:
    url = f"{base}{path}"
    try:
        with _HTTP.open(url, timeout=request_timeout_s) as response:
            body = json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise PrometheusUnreachable(f"{url}: {exc}") from None
    if not isinstance(body, dict) or body.get("status") != "success":
        raise PrometheusUnreachable(f"{url}: not a successful Prometheus API answer: {str(body)[:200]}")
    return body.get("data")


def _observe(base: str, monitoring: MonitoringPlan, rules: Mapping[str, int], simulates_gpus: bool,
             request_timeout_s: float) -> list[LayerCheck]:
    active = (_api(base, "/api/v1/targets?state=active", request_timeout_s) or {}).get("activeTargets") or []
    groups = (_api(base, "/api/v1/rules?type=alert", request_timeout_s) or {}).get("groups") or []
    simulated: set[str] = set()
    if monitoring.gpu_hosts:
        query = urllib.parse.urlencode({"query": SIMULATED_QUERY})
        result = (_api(base, f"/api/v1/query?{query}", request_timeout_s) or {}).get("result") or []
        simulated = {str(r.get("metric", {}).get("host", "")) for r in result}
    return target_checks(monitoring, active, simulated, simulates_gpus) + rule_checks(rules, groups)


def run_monitoring_checks(monitoring: MonitoringPlan, simulates_gpus: bool, timeout_s: float = 60.0,
                          base_url: str | None = None, request_timeout_s: float = 10.0) -> list[LayerCheck]:
    """Every check, read again until all pass or `timeout_s` has passed (a target Prometheus has not scraped
    since it started is not up yet). Raises PrometheusUnreachable."""
    base = base_url or prometheus_url(monitoring)
    rules = planned_rules(monitoring)
    deadline = time.monotonic() + timeout_s
    while True:
        checks = _observe(base, monitoring, rules, simulates_gpus, request_timeout_s)
        if all(c.ok for c in checks) or time.monotonic() >= deadline:
            return checks
        time.sleep(2)


def monitoring_layer(plan: Plan, reach: Reach, timeout_s: float = 60.0) -> LayerChecks | None:
    """The monitoring layer's checks; None where the plan has no monitoring (nothing planned, nothing checked).
    A Prometheus that does not answer is the layer not checked, which fails the run."""
    monitoring = plan.monitoring
    if monitoring is None:
        return None
    try:
        checks = run_monitoring_checks(monitoring, "gpus" in reach.simulates, timeout_s)
    except PrometheusUnreachable as exc:
        return LayerChecks(None, f"Prometheus on {monitoring.host} does not answer: {exc}", TITLE)
    return LayerChecks(tuple(checks), "", TITLE, {"prometheus": prometheus_url(monitoring)})
