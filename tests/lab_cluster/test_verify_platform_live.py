"""`verify`'s platform checks on the lab's real cluster: Kueue's queues and a probe Job through a team's LocalQueue
(clusterforge.verify.kueue_checks, as the Kubernetes driver runs them with kubernetes.kueue declared) and
Prometheus's targets and rules (clusterforge.cli._layers.monitoring_layer, the layer `verify` adds).

On the healthy lab every check holds (the probe Job and the dcgm targets SIMULATED: the GPUs are the lab's plugin's,
the GPU series cf-sim-dcgm-exporter's); a ClusterQueue whose nominal quota is patched off the plan fails naming the
team and both values (then restored); node_exporter stopped on one GPU server fails the check naming that host
and job (then started and up again). Uses the session's kube_cluster and monitoring_cluster (tests/conftest.py)."""

from __future__ import annotations

import copy
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab]

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import CustomObjectsApi  # noqa: E402


def _plan():
    from clusterforge.loading import load_and_plan

    return load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")[1]


PLAN = _plan()
assert PLAN.queueing is not None and PLAN.queueing.enabled and PLAN.monitoring is not None
GPU_SERVERS = list(PLAN.monitoring.gpu_hosts)
EXPORTER_UNIT = "prometheus-node-exporter"  # roles/node_exporter/vars/Debian.yml
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"


def _expected() -> dict:
    from clusterforge.render.ansible_inventory import kubernetes_vars

    return kubernetes_vars(PLAN)


def _monitoring():
    from clusterforge.render.monitoring.expected import monitoring_expected

    return monitoring_expected(PLAN)


def _kueue(kube_cluster, probe: bool = True, timeout_s: float = 120.0) -> list:
    from clusterforge.verify.kueue_checks import run_kueue_checks

    return run_kueue_checks(kube_cluster.api, _expected(), timeout_s, probe=probe)


def _failed(checks) -> dict[str, str]:
    return {c.name: c.detail for c in checks if not c.ok}


def test_verify_passes_the_queues_a_probe_job_and_the_monitoring_of_the_healthy_lab(kube_cluster, monitoring_cluster):
    from clusterforge.cli._layers import monitoring_layer
    from clusterforge.targets import LAB
    from clusterforge.verify.kueue_checks import probe_team

    started = time.monotonic()
    checks = _kueue(kube_cluster)
    assert _failed(checks) == {}
    team = probe_team(_expected()["queueing"])
    probe = checks[-1]
    assert probe.name == f"probe job via localqueue {team}" and probe.outcome == "simulated"
    assert f"admitted by ClusterQueue {team}" in probe.detail and "allocated 1 GPU(s)" in probe.detail
    assert len(checks) == 2 * len(PLAN.queueing.queues) + 1
    print(f"\nkueue checks {time.monotonic() - started:.1f} s: {probe.detail}")
    started = time.monotonic()
    layer = monitoring_layer(PLAN, LAB, timeout_s=60)
    assert layer is not None and layer.checks is not None, layer
    assert _failed(layer.checks) == {}
    outcomes = {c.name: c.outcome for c in layer.checks}
    assert {outcomes[f"target dcgm {h}"] for h in GPU_SERVERS} == {"simulated"}
    # the schedulers' targets too: the API server, every kubelet, Kueue and cf-slurm-exporter
    schedulers = {f"target {t.job} {t.host}" for t in PLAN.monitoring.targets
                  if t.job in ("kube-apiserver", "kubelet", "kueue", "slurm")}
    assert len(schedulers) == len(GPU_SERVERS) + 3 and {outcomes[n] for n in schedulers} == {"passed"}
    assert outcomes["rule set"] == "passed"
    print(f"monitoring checks {time.monotonic() - started:.1f} s, {len(layer.checks)} checks")


def test_a_cluster_queue_quota_off_the_plan_fails_naming_the_team(kube_cluster):
    custom = CustomObjectsApi(kube_cluster.api)
    team = min(PLAN.queueing.queues, key=lambda q: q.nominal_gpus)
    cq = custom.get_cluster_custom_object(GROUP, VERSION, "clusterqueues", team.team)
    saved = copy.deepcopy(cq["spec"]["resourceGroups"])
    patched = copy.deepcopy(saved)
    quota = next(r for f in patched[0]["flavors"] for r in f["resources"] if r["name"] == "nvidia.com/gpu")
    wrong = team.nominal_gpus + 1
    quota["nominalQuota"] = str(wrong)
    custom.patch_cluster_custom_object(GROUP, VERSION, "clusterqueues", team.team,
                                       {"spec": {"resourceGroups": patched}})
    try:
        failed = _failed(_kueue(kube_cluster, probe=False, timeout_s=0))
        assert list(failed) == [f"clusterqueue {team.team}"], failed
        detail = failed[f"clusterqueue {team.team}"]
        assert detail.startswith(f"team {team.team}: ")
        assert f"nominal quota {wrong} in flavor {team.quotas[0].flavor}, planned {team.nominal_gpus}" in detail
    finally:
        custom.patch_cluster_custom_object(GROUP, VERSION, "clusterqueues", team.team,
                                           {"spec": {"resourceGroups": saved}})
    assert _failed(_kueue(kube_cluster, probe=False, timeout_s=30)) == {}


def test_a_stopped_node_exporter_on_a_gpu_server_fails_naming_that_host(monitoring_cluster):
    from clusterforge.verify.monitoring_checks import run_monitoring_checks

    host = GPU_SERVERS[0]
    expected = _monitoring()
    assert _failed(run_monitoring_checks(expected, True, timeout_s=60)) == {}
    rc, _, err = monitoring_cluster.sh(host, f"systemctl stop {EXPORTER_UNIT}")
    assert rc == 0, err
    stopped = time.monotonic()
    try:
        while True:  # the lab scrapes every 5 s: the next scrape finds it down
            failed = _failed(run_monitoring_checks(expected, True, timeout_s=0))
            if failed:
                break
            assert time.monotonic() - stopped < 45, "the stopped exporter's target still up after 45 s"
            time.sleep(1)
        seen_s = time.monotonic() - stopped
        assert list(failed) == [f"target node {host}"], failed
        assert failed[f"target node {host}"].startswith(f"host {host}: job node is down at http://")
    finally:
        rc, _, err = monitoring_cluster.sh(host, f"systemctl start {EXPORTER_UNIT}")
    assert rc == 0, err
    started = time.monotonic()
    assert _failed(run_monitoring_checks(expected, True, timeout_s=60)) == {}
    print(f"\n{host}'s node target failed {seen_s:.1f} s after the stop; up again {time.monotonic() - started:.1f} s"
          " after the start")
