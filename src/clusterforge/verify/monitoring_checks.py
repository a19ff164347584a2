"""The monitoring layer's checks, against the live Prometheus through its HTTP API on the monitoring host's
management address (plan.monitoring: the control node, port 9090): every planned host's node_exporter, every
GPU server's dcgm-exporter and, where planned, every API server, kubelet, Kueue and cf-slurm-exporter an ``up``
target (/api/v1/targets), the loaded rule groups the planned ones with the
planned number of alerting rules each (/api/v1/rules). The comparisons are verify/monitoring_compare.py's; the GPU
series of a dcgm target are asked (/api/v1/query) whether they are simulated, and on the lab they are (the
cf-sim-dcgm-exporter): those checks are SIMULATED, never passed.

Not planned, not checked: a declaration without a monitoring host (no control node) has no expectations
(monitoring_expected is None) and verify reports no monitoring layer (null in its JSON)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from clusterforge.render.monitoring.expected import DCGM_JOB, MonitoringExpected
from clusterforge.verify.layer_check import LayerCheck
from clusterforge.verify.monitoring_compare import rule_checks, target_checks

__all__ = ["TITLE", "run_monitoring_checks", "PrometheusUnreachable"]

TITLE = "monitoring layer (Prometheus's targets and rules; lab: SIMULATED GPU series)"
SIMULATED_QUERY = f'count by (host) ({{job="{DCGM_JOB}",__name__=~"DCGM_.+",simulated="true"}})'
_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the management plane, never through a proxy


class PrometheusUnreachable(RuntimeError):
    """Prometheus did not answer, or answered something that is not its API's JSON."""


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


def _observe(expected: MonitoringExpected, simulates_gpus: bool, request_timeout_s: float) -> list[LayerCheck]:
    base = expected["prometheus"]
    active = (_api(base, "/api/v1/targets?state=active", request_timeout_s) or {}).get("activeTargets") or []
    groups = (_api(base, "/api/v1/rules", request_timeout_s) or {}).get("groups") or []
    simulated: set[str] = set()
    if expected["gpu_hosts"]:
        query = urllib.parse.urlencode({"query": SIMULATED_QUERY})
        result = (_api(base, f"/api/v1/query?{query}", request_timeout_s) or {}).get("result") or []
        simulated = {str(r.get("metric", {}).get("host", "")) for r in result}
    return target_checks(expected, active, simulated, simulates_gpus) + rule_checks(expected["rule_groups"], groups)


def run_monitoring_checks(expected: MonitoringExpected, simulates_gpus: bool, timeout_s: float = 60.0,
                          request_timeout_s: float = 10.0) -> list[LayerCheck]:
    """Every check (`expected`: render.monitoring.expected.monitoring_expected; `simulates_gpus`: the reach stands
    in for GPUs), read again until all pass or `timeout_s` has passed (a target Prometheus has not scraped since it
    started is not up yet). Raises PrometheusUnreachable."""
    deadline = time.monotonic() + timeout_s
    while True:
        checks = _observe(expected, simulates_gpus, request_timeout_s)
        if all(c.ok for c in checks) or time.monotonic() >= deadline:
            return checks
        time.sleep(2)
