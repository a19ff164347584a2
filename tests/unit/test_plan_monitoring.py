"""The monitoring plan: targets with the Plan's identity, where Prometheus runs, and the disk it needs."""

from __future__ import annotations

import re
import shutil
from functools import cache
from pathlib import Path

import pytest

from clusterforge.loading import DeclarationError, load_and_plan
from clusterforge.plan import Plan
from clusterforge.plan.monitoring import BYTES_PER_SAMPLE, DISK_HEADROOM, GIB, ScrapeJob

REPO = Path(__file__).resolve().parents[2]


@cache
def lab() -> Plan:
    return load_and_plan(REPO / "inventory" / "lab.yaml")[1]


def _declared(tmp_path: Path, extra: str, base: str = "lab.yaml") -> Path:
    """``base`` with ``extra`` appended; a ``monitoring:`` block in ``extra`` replaces the declaration's own."""
    shutil.copytree(REPO / "inventory" / "catalog", tmp_path / "catalog")
    path = tmp_path / base
    text = (REPO / "inventory" / base).read_text()
    if extra.startswith("monitoring:"):
        text = re.sub(r"(?m)^monitoring:\n(?:[ #].*\n|\n)*", "", text)
    path.write_text(text + extra)
    return path


def test_every_host_is_a_node_target_with_its_identity() -> None:
    plan = lab()
    monitoring = plan.monitoring
    assert monitoring is not None
    nodes = {t.host: dict(t.labels) for t in monitoring.targets if t.job == ScrapeJob.NODE}
    hosts = {d.name: d for d in plan.devices if d.kind in ("server", "storage", "control")}
    assert set(nodes) == set(hosts)
    for name, labels in nodes.items():
        device = hosts[name]
        assert labels["host"] == name and labels["role"] == device.kind and labels["rack"] == device.rack
        assert labels.get("su") == (f"su{device.su:02d}" if device.su is not None else None)


def test_gpu_servers_alone_are_dcgm_and_kubelet_targets_and_slurm_is_scraped_on_its_controller() -> None:
    monitoring = lab().monitoring
    assert monitoring is not None
    gpu = set(monitoring.gpu_hosts)
    assert gpu and {t.host for t in monitoring.targets if t.job == ScrapeJob.DCGM} == gpu
    assert {t.host for t in monitoring.targets if t.job == ScrapeJob.KUBELET} == gpu
    assert {t.host for t in monitoring.targets if t.job == ScrapeJob.SLURM} == {"ctl-01"}
    assert all(t.address.endswith(":9400") for t in monitoring.targets if t.job == ScrapeJob.DCGM)


def test_prometheus_runs_on_the_first_control_node_on_its_management_address() -> None:
    plan = lab()
    monitoring = plan.monitoring
    assert monitoring is not None
    assert (monitoring.host, monitoring.address) == ("ctl-01", plan.device("ctl-01").management_ip)
    assert (monitoring.prometheus_port, monitoring.alertmanager_port) == (9090, 9093)


def test_interfaces_map_to_planes_and_gpus_to_rails() -> None:
    monitoring = lab().monitoring
    assert monitoring is not None
    roles = {i.device: (i.plane, i.rail) for i in monitoring.interfaces}
    assert roles["rail0"] == ("data", 0) and roles["rail1"] == ("data", 1)
    assert roles["stor0"] == ("storage", None) and roles["mgmt0"] == ("management", None)
    assert monitoring.gpu_rails == ((0, 0), (1, 1))


def test_disk_follows_series_interval_and_retention() -> None:
    monitoring = lab().monitoring
    assert monitoring is not None
    assert monitoring.series == sum(t.series for t in monitoring.targets) > 0
    expected = monitoring.series / monitoring.scrape_interval_s * monitoring.retention_days * 86_400 * BYTES_PER_SAMPLE
    assert monitoring.retention_bytes == pytest.approx(expected, abs=1)
    assert monitoring.disk_gib * GIB >= monitoring.retention_bytes * DISK_HEADROOM


def test_declared_host_and_retention_are_used(tmp_path: Path) -> None:
    interval = lab().monitoring.scrape_interval_s  # the lab's own (inventory/lab.yaml)
    plan = load_and_plan(_declared(tmp_path, f"monitoring:\n  host: ctl-01\n  retention_days: 30\n"
                                             f"  scrape_interval_s: {interval}\n"))[1]
    assert plan.monitoring is not None and plan.monitoring.retention_days == 30
    assert plan.monitoring.retention_bytes == pytest.approx(2 * lab().monitoring.retention_bytes, abs=2)


def test_a_monitoring_host_that_is_no_control_node_is_refused_where_declared(tmp_path: Path) -> None:
    path = _declared(tmp_path, "monitoring:\n  host: ctl-09\n")
    with pytest.raises(DeclarationError) as caught:
        load_and_plan(path)
    lines = [str(problem) for problem in caught.value.problems]
    assert any(line.startswith(f"{path}:") and "monitoring.host: 'ctl-09' is not a control node" in line
               for line in lines), lines


def test_a_cluster_without_control_nodes_plans_no_monitoring() -> None:
    plan = load_and_plan(REPO / "inventory" / "superpod-4su.yaml")[1]
    assert not any(d.kind == "control" for d in plan.devices)
    assert plan.monitoring is None


def test_kueue_is_scraped_where_it_runs_and_queues_and_accounts_map_to_their_teams(tmp_path: Path) -> None:
    from clusterforge.render.monitoring import monitoring_files
    from clusterforge.render.monitoring.prometheus_yml import prometheus_config
    from clusterforge.render.monitoring.rules import rule_groups

    monitoring = lab().monitoring
    assert monitoring is not None and monitoring.teams == ("research", "inference")
    assert [(t.host, t.address) for t in monitoring.targets if t.job == ScrapeJob.KUEUE] == [("ctl-01",
                                                                                               "198.18.8.76:8443")]
    jobs = {j["job_name"]: j for j in prometheus_config(monitoring, "lab", [])["scrape_configs"]}
    for job, source in ((ScrapeJob.KUEUE, "cluster_queue"), (ScrapeJob.SLURM, "account")):
        relabels = jobs[job]["metric_relabel_configs"]
        assert [(r["source_labels"], r["regex"], r["target_label"], r["replacement"]) for r in relabels] == [
            ([source], team, "team", team) for team in monitoring.teams]
    # the Kubernetes jobs send the service account token; the API server and Kueue are verified
    assert jobs[ScrapeJob.KUBE_APISERVER]["tls_config"] == {"ca_file": "/etc/prometheus/kubernetes-ca.crt"}
    assert jobs[ScrapeJob.KUEUE]["tls_config"] == {"ca_file": "/etc/prometheus/kueue-ca.crt"}
    assert all(jobs[j]["authorization"] == {"credentials_file": "/etc/prometheus/kubernetes.token"}
               for j in (ScrapeJob.KUBE_APISERVER, ScrapeJob.KUBELET, ScrapeJob.KUEUE))
    assert "token" not in "".join(v for k, v in monitoring_files(lab()).items() if k.endswith(".yml")).replace(
        "kubernetes.token", "")
    # without Kueue: no kueue job and no kueue rules
    path = tmp_path / "lab.yaml"
    shutil.copytree(REPO / "inventory" / "catalog", tmp_path / "catalog")
    text = (REPO / "inventory" / "lab.yaml").read_text()
    assert text.count("  kueue: true\n") == 1
    path.write_text(text.replace("  kueue: true\n", "  kueue: false\n"))
    without = load_and_plan(path)[1].monitoring
    assert without is not None and ScrapeJob.KUEUE not in without.jobs()
    assert "kueue" not in {g.name for g in rule_groups(without)}
