"""The layers `verify` checks beside the schedulers': the monitoring layer (Prometheus's host targets and rules),
where the declaration plans monitoring. Not planned: None (null in the JSON report), never a pass."""

from __future__ import annotations

from clusterforge.cli._common import err, say
from clusterforge.plan import Plan
from clusterforge.schedulers import LayerChecks
from clusterforge.targets import Reach

__all__ = ["monitoring_for_run", "monitoring_layer"]


def monitoring_for_run(plan: Plan, reach: Reach, enabled: bool, hosts: list[str], checks: list[str],
                       quiet: bool) -> LayerChecks | None:
    """The monitoring layer of one `verify` run. Prometheus's targets and rules are the whole cluster's: a run
    narrowed to hosts or check modules, or to this machine, does not ask Prometheus and says so (None in the
    JSON report, as for a layer not planned or turned off with --no-monitoring)."""
    narrowed = [why for why, on in (("--host", bool(hosts)), ("--check", bool(checks)),
                                    ("--target local", reach.local)) if on]
    if not enabled:
        return None
    if narrowed:
        if not quiet:
            say(err, f"monitoring layer not checked: {', '.join(narrowed)} narrow the run to host checks")
        return None
    return monitoring_layer(plan, reach)


def monitoring_layer(plan: Plan, reach: Reach, timeout_s: float = 60.0) -> LayerChecks | None:
    """None where the plan has no monitoring; a Prometheus that does not answer is the layer not checked, which
    fails the run."""
    from clusterforge.render.monitoring.expected import monitoring_expected
    from clusterforge.verify.monitoring_checks import TITLE, PrometheusUnreachable, run_monitoring_checks

    expected = monitoring_expected(plan)
    if expected is None:
        return None
    try:
        checks = run_monitoring_checks(expected, "gpus" in reach.simulates, timeout_s)
    except PrometheusUnreachable as exc:
        return LayerChecks(None, f"Prometheus on {expected['host']} does not answer: {exc}", TITLE)
    return LayerChecks(tuple(checks), "", TITLE, {"prometheus": expected["prometheus"]})
