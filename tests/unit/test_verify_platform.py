"""verify's platform comparisons (verify/queue_compare.py, verify/monitoring_compare.py): Kueue's queues and
Prometheus's targets and rules against the plan of inventory/lab.yaml (its kubernetes_vars and monitoring_expected),
as the API objects and API answers they read; what fails names the team (the host and job) and both values. And
what is not planned is not checked."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

from clusterforge.cli._layers import monitoring_layer
from clusterforge.loading import load_and_plan
from clusterforge.plan import Plan
from clusterforge.render.ansible_inventory import kubernetes_vars
from clusterforge.render.kueue import kueue_objects
from clusterforge.render.monitoring.expected import MonitoringExpected, monitoring_expected
from clusterforge.targets import LAB
from clusterforge.verify.monitoring_compare import rule_checks, target_checks
from clusterforge.verify.queue_compare import planned_queues, queue_checks

REPO = Path(__file__).resolve().parents[2]


@cache
def _plan(name: str = "lab") -> Plan:
    return load_and_plan(REPO / "inventory" / f"{name}.yaml")[1]


def _queueing(name: str = "lab") -> dict[str, Any]:
    queueing = planned_queues(kubernetes_vars(_plan(name)))
    assert queueing is not None
    return dict(queueing)


def _expected() -> MonitoringExpected:
    expected = monitoring_expected(_plan())
    assert expected is not None
    return expected


def _applied() -> tuple[dict[str, Any], dict[str, Any]]:
    """The ClusterQueues and LocalQueues of the lab as roles/k8s_kueue applies them (render/kueue.py), with the
    Active condition Kueue adds."""
    queueing = _plan().queueing
    assert queueing is not None
    objects = kueue_objects(queueing)
    cluster = {o["metadata"]["name"]: {**o, "status": {"conditions": [{"type": "Active", "status": "True"}]}}
               for o in objects if o["kind"] == "ClusterQueue"}
    local = {o["metadata"]["namespace"]: o for o in objects if o["kind"] == "LocalQueue"}
    return cluster, local


def _failed(checks: list) -> dict[str, str]:
    return {c.name: c.detail for c in checks if not c.ok}


def test_the_applied_queues_pass_one_check_per_planned_queue() -> None:
    cluster, local = _applied()
    checks = queue_checks(_queueing(), cluster, local)
    assert [c.name for c in checks] == ["clusterqueue research", "clusterqueue inference", "localqueue research",
                                        "localqueue inference"]
    assert _failed(checks) == {}
    assert "nominal 6 borrowing 2 lending 6" in checks[0].detail


def test_a_nominal_quota_off_the_plan_fails_naming_the_team_and_both_values() -> None:
    queueing = _queueing()
    cluster, local = _applied()
    cluster = copy.deepcopy(cluster)
    cluster["inference"]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "7"
    failed = _failed(queue_checks(queueing, cluster, local))
    assert failed == {"clusterqueue inference": "team inference: nvidia.com/gpu nominal quota 7 in flavor h200,"
                                                " planned 2"}


def test_limits_cohort_flavors_and_activity_off_the_plan_each_fail() -> None:
    queueing = _queueing()
    cluster, local = _applied()
    research = copy.deepcopy(cluster["research"])
    quota = research["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    quota["borrowingLimit"] = 0  # a number, as a client may write it: still compared as GPUs
    del quota["lendingLimit"]
    research["spec"]["cohortName"] = "other"
    research["spec"]["resourceGroups"][0]["flavors"].append(
        {"name": "b200", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "4"}]})
    research["status"]["conditions"] = [{"type": "Active", "status": "False", "reason": "FlavorNotFound",
                                         "message": "Can't admit new workloads: flavor b200 not found"}]
    detail = _failed(queue_checks(queueing, {**cluster, "research": research}, local))["clusterqueue research"]
    assert detail.startswith("team research: cohort other, planned lab")
    assert "borrowing limit 0 in flavor h200, planned 2" in detail
    assert "lending limit none in flavor h200, planned 6" in detail
    assert "flavor b200 quoted (nvidia.com/gpu nominal quota 4), not planned" in detail
    assert "not active (FlavorNotFound: Can't admit new workloads: flavor b200 not found)" in detail


def test_missing_queues_and_a_local_queue_feeding_another_cluster_queue_fail() -> None:
    queueing = _queueing()
    cluster, local = _applied()
    wrong = copy.deepcopy(local["research"])
    wrong["spec"]["clusterQueue"] = "inference"
    failed = _failed(queue_checks(queueing, {"research": cluster["research"]}, {"research": wrong}))
    assert failed == {
        "clusterqueue inference": "team inference: no ClusterQueue inference (planned nominal quota 2 GPUs)",
        "localqueue research": "team research: LocalQueue research feeds ClusterQueue inference, planned research",
        "localqueue inference": "team inference: no LocalQueue inference in namespace inference",
    }


def test_kueue_is_checked_only_where_the_declaration_turns_it_on() -> None:
    assert planned_queues(kubernetes_vars(_plan())) is not None  # lab.yaml: kubernetes.kueue: true
    other = _plan("roce-128gpu")
    assert other.queueing is not None  # planned and rendered, not applied: no Kueue check
    assert planned_queues(kubernetes_vars(other)) is None


def _targets(down: str = "", job: str = "node") -> list[dict[str, Any]]:
    """/api/v1/targets' activeTargets for the lab's planned node and dcgm targets, one of them down."""
    monitoring = _plan().monitoring
    assert monitoring is not None
    out = []
    for t in monitoring.targets:  # every planned job's, the kubelet's and the others' too
        broken = t.host == down and t.job == job
        out.append({"labels": {**dict(t.labels), "job": t.job, "instance": t.host},
                    "scrapeUrl": f"http://{t.address}/metrics", "health": "down" if broken else "up",
                    "lastError": "connection refused" if broken else ""})
    return out


def test_every_planned_host_target_up_passes_and_simulated_gpu_series_are_said_so() -> None:
    monitoring = _plan().monitoring
    assert monitoring is not None
    checks = target_checks(_expected(), _targets(), set(monitoring.gpu_hosts), simulates_gpus=True)
    assert [c.name for c in checks] == [f"target {t.job} {t.host}" for t in monitoring.targets
                                        if t.job not in ("prometheus", "alertmanager")]
    assert _failed(checks) == {}
    assert {c.outcome for c in checks if c.name.startswith("target dcgm")} == {"simulated"}
    assert {c.outcome for c in checks if not c.name.startswith("target dcgm")} == {"passed"}
    # every scheduler target is required where planned: the API server, the kubelets, Kueue, cf-slurm-exporter
    assert {c.name.split()[1] for c in checks} == {"node", "dcgm", "kube-apiserver", "kubelet", "kueue", "slurm"}


def test_a_down_kueue_or_slurm_target_fails_naming_the_host_and_the_job() -> None:
    monitoring = _plan().monitoring
    assert monitoring is not None
    for job in ("kueue", "slurm", "kubelet"):
        host = next(t.host for t in monitoring.targets if t.job == job)
        failed = _failed(target_checks(_expected(), _targets(down=host, job=job), set(monitoring.gpu_hosts), True))
        assert list(failed) == [f"target {job} {host}"], failed
        assert failed[f"target {job} {host}"].startswith(f"host {host}: job {job} is down")


def test_a_down_node_exporter_fails_naming_the_host_and_the_job() -> None:
    monitoring = _plan().monitoring
    assert monitoring is not None
    host = monitoring.gpu_hosts[0]
    address = next(t.address for t in monitoring.targets if t.job == "node" and t.host == host)
    failed = _failed(target_checks(_expected(), _targets(down=host), set(monitoring.gpu_hosts), True))
    assert failed == {f"target node {host}": f"host {host}: job node is down at http://{address}/metrics:"
                                             " connection refused"}


def test_a_target_prometheus_lacks_and_simulated_gpus_on_a_real_cluster_fail() -> None:
    monitoring = _plan().monitoring
    assert monitoring is not None
    host = monitoring.gpu_hosts[-1]
    active = [t for t in _targets() if not (t["labels"]["host"] == "stor-001" and t["labels"]["job"] == "node")]
    failed = _failed(target_checks(_expected(), active, {host}, simulates_gpus=False))
    assert failed["target node stor-001"].startswith("host stor-001: no active target of job node in Prometheus")
    assert failed[f"target dcgm {host}"] == (f"host {host}: job dcgm serves SIMULATED GPU series"
                                             " (simulated=\"true\") on a target that has real GPUs")
    assert len(failed) == 2


def _loaded(planned: dict[str, int]) -> list[dict[str, Any]]:
    return [{"name": name, "rules": [{"type": "alerting", "name": f"A{i}"} for i in range(count)]}
            for name, count in planned.items()]


def test_the_planned_rule_groups_loaded_pass_and_any_difference_fails() -> None:
    planned = _expected()["rule_groups"]
    assert planned == {"gpu": 12, "node": 5, "network": 4, "kueue": 2, "slurm": 3}
    checks = rule_checks(planned, _loaded(planned))
    assert [c.name for c in checks] == [f"rules {g}" for g in planned] + ["rule set"]
    assert _failed(checks) == {}
    loaded = _loaded({**planned, "gpu": 11, "extra": 1})
    loaded = [g for g in loaded if g["name"] != "slurm"]
    assert _failed(rule_checks(planned, loaded)) == {
        "rules gpu": "rule group gpu: 11 alerting rules loaded, planned 12",
        "rules slurm": "rule group slurm not loaded (planned 3 alerting rules)",
        "rule set": "loaded groups differ from the plan's (not planned: extra; missing: slurm)",
    }


def test_monitoring_is_not_checked_where_none_is_planned() -> None:
    plan = _plan("superpod-4su")
    assert plan.monitoring is None and monitoring_expected(plan) is None
    assert monitoring_layer(plan, LAB) is None  # not planned: null in verify's report, never a pass


def test_a_prometheus_that_does_not_answer_is_reported_not_passed() -> None:
    import socket

    import pytest

    from clusterforge.verify.monitoring_checks import PrometheusUnreachable, run_monitoring_checks

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    expected: MonitoringExpected = {**_expected(), "prometheus": f"http://127.0.0.1:{port}"}
    with pytest.raises(PrometheusUnreachable, match=f"127.0.0.1:{port}/api/v1/targets"):
        run_monitoring_checks(expected, True, timeout_s=0, request_timeout_s=2)
