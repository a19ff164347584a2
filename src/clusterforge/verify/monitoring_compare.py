"""What `verify` finds wrong in the running Prometheus, compared with the plan's monitoring (render/monitoring/
expected.py): pure functions of those expectations and what Prometheus's HTTP API returned (the active targets of
/api/v1/targets, the groups of /api/v1/rules). The checks come from the plan: one per planned host target, one per
planned rule group and one for the rule set as a whole, whatever Prometheus reports besides.

* Targets: every planned host's node_exporter (job ``node``), every GPU server's dcgm-exporter (job ``dcgm``) and
  where planned the API servers, kubelets, Kueue and cf-slurm-exporter (render/monitoring/expected.py) must be an
  active target with health ``up``, found by its ``job`` and the plan's ``host`` label. A target that
  is down fails naming the host, the job and Prometheus's last scrape error. A dcgm target whose GPU series carry
  ``simulated="true"`` (the lab's cf-sim-dcgm-exporter) is SIMULATED where the reach simulates GPUs, and a failure
  where it does not (a real cluster must not be watched by a simulator).
* Rules: each planned group must be loaded with the planned number of alerting rules; the rule set passes when
  the loaded group names are exactly the planned ones.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from clusterforge.render.monitoring.expected import DCGM_JOB, MonitoringExpected
from clusterforge.verify.layer_check import LayerCheck

__all__ = ["SIMULATED_GPU_SERIES", "target_checks", "rule_checks"]

SIMULATED_GPU_SERIES = ("GPU series: the lab's cf-sim-dcgm-exporter (no GPUs in the lab; every series it serves"
                        " carries simulated=\"true\")")


def _by_job_and_host(active: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    found: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for target in active:
        labels = target.get("labels") or {}
        found.setdefault((str(labels.get("job", "")), str(labels.get("host", ""))), []).append(target)
    return found


def target_checks(expected: MonitoringExpected, active: Sequence[Mapping[str, Any]],
                  simulated_gpu_hosts: Collection[str] = (), simulates_gpus: bool = False) -> list[LayerCheck]:
    """One check per planned host target. `active`: /api/v1/targets' activeTargets; `simulated_gpu_hosts`:
    the hosts whose dcgm series say simulated="true"; `simulates_gpus`: the reach stands in for GPUs (the lab)."""
    found = _by_job_and_host(active)
    out = []
    for planned in expected["targets"]:
        job, host, address = planned["job"], planned["host"], planned["address"]
        name = f"target {job} {host}"
        targets = found.get((job, host), [])
        if not targets:
            out.append(LayerCheck(name, False, f"host {host}: no active target of job {job} in"
                                               f" Prometheus (planned {address})"))
            continue
        down = [t for t in targets if t.get("health") != "up"]
        if down:
            first = down[0]
            error = first.get("lastError") or "not scraped yet"
            out.append(LayerCheck(name, False, f"host {host}: job {job} is {first.get('health')}"
                                               f" at {first.get('scrapeUrl', address)}: {error}"))
            continue
        detail = f"up at {targets[0].get('scrapeUrl', address)}"
        if job == DCGM_JOB and host in simulated_gpu_hosts:
            if not simulates_gpus:
                out.append(LayerCheck(name, False, f"host {host}: job {job} serves SIMULATED GPU"
                                                   " series (simulated=\"true\") on a target that has real GPUs"))
                continue
            out.append(LayerCheck(name, True, f"{detail} (SIMULATED GPU series)", SIMULATED_GPU_SERIES))
            continue
        out.append(LayerCheck(name, True, detail))
    return out


def rule_checks(planned: Mapping[str, int], loaded: Sequence[Mapping[str, Any]]) -> list[LayerCheck]:
    """`planned`: alerting rules per planned group name (render/monitoring/rules.py's groups); `loaded`: the
    groups of /api/v1/rules. One check per planned group, then the rule set's."""
    alerting: dict[str, int] = {}
    for group in loaded:
        name = str(group.get("name", ""))
        alerting[name] = alerting.get(name, 0) + sum(1 for r in group.get("rules") or []
                                                     if r.get("type") == "alerting")
    out = []
    for name, count in planned.items():
        check = f"rules {name}"
        if name not in alerting:
            out.append(LayerCheck(check, False, f"rule group {name} not loaded (planned {count} alerting rules)"))
        elif alerting[name] != count:
            out.append(LayerCheck(check, False, f"rule group {name}: {alerting[name]} alerting rules loaded,"
                                                f" planned {count}"))
        else:
            out.append(LayerCheck(check, True, f"{count} alerting rules loaded, as planned"))
    extra = sorted(set(alerting) - set(planned))
    missing = [name for name in planned if name not in alerting]
    if extra or missing:
        parts = [f"not planned: {', '.join(extra)}"] if extra else []
        parts += [f"missing: {', '.join(missing)}"] if missing else []
        out.append(LayerCheck("rule set", False, f"loaded groups differ from the plan's ({'; '.join(parts)})"))
    else:
        out.append(LayerCheck("rule set", True, f"the {len(planned)} planned groups and no other"
                                                f" ({sum(planned.values())} alerting rules)"))
    return out
