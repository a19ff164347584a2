"""run_checks end to end without a lab: the local target on this machine, and the ways a run is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clusterforge.verify.runner import VerifyError, default_workers, pytest_command, run_checks

HOST = "su01-r01-gpu01"


@pytest.fixture(scope="module")
def local_result(rendered_lab, tmp_path_factory):
    report = tmp_path_factory.mktemp("report") / "verify.json"
    return run_checks(rendered_lab, "local", [HOST], None, report, concerns=["network", "kernel"]), report


def test_local_run_reports_only_the_named_host(local_result):
    result, _ = local_result
    assert list(result.per_host) == [HOST]
    assert {r["host"] for r in result.records} == {HOST}


def test_local_run_fails_where_this_machine_is_not_the_planned_host(local_result):
    """This machine has no lab interface mgmt0: the check for it must fail, not skip or pass."""
    result, _ = local_result
    outcome = {r["test"]: r["outcome"] for r in result.records}
    assert outcome[f"network::test_interface_exists[{HOST}/mgmt0]"] == "failed"
    assert not result.ok


def test_local_run_counts_add_up(local_result):
    result, _ = local_result
    assert result.simulated == 0  # the local target simulates nothing
    assert result.passed + result.failed + result.skipped == len(result.records) > 0


def test_local_run_writes_the_report(local_result):
    result, report = local_result
    data = json.loads(report.read_text())
    assert data["target"] == "local" and data["hosts_checked"] == [HOST]
    assert data["totals"]["failed"] == result.failed
    assert data["concerns"] == ["network", "kernel"]


def test_interface_checks_are_parametrized_per_interface(local_result):
    result, _ = local_result
    mtu_checks = sorted(r["test"] for r in result.records if "test_interface_mtu" in r["test"])
    assert mtu_checks == [f"network::test_interface_mtu[{HOST}/{i}]" for i in ("bond0", "mgmt0", "rail0", "rail1")]


def test_unknown_host_is_refused(rendered_lab):
    with pytest.raises(VerifyError, match="not in the inventory"):
        run_checks(rendered_lab, "ssh", ["nope"], None, None)


def test_local_target_needs_one_host(rendered_lab):
    with pytest.raises(VerifyError, match="exactly one"):
        run_checks(rendered_lab, "local", None, None, None)


def test_unknown_check_module_is_refused(rendered_lab):
    with pytest.raises(VerifyError, match="unknown check module"):
        run_checks(rendered_lab, "local", [HOST], None, None, concerns=["bogus"])


def test_missing_ssh_config_is_refused(rendered_lab, tmp_path):
    with pytest.raises(VerifyError, match="does not exist"):
        run_checks(rendered_lab, "ssh", None, tmp_path / "none", None)


def test_missing_inventory_is_refused(tmp_path):
    with pytest.raises(VerifyError, match="no rendered inventory"):
        run_checks(tmp_path, "ssh", None, None, None)


def test_pytest_command_names_hosts_and_modules(tmp_path):
    cmd = pytest_command(Path("/inv.yml"), "lab", ["h1", "h2"], Path("/ssh_config"), tmp_path / "r.json",
                         concerns=["network"], workers=3)
    assert cmd[cmd.index("--cf-target") + 1] == "lab"
    assert [cmd[i + 1] for i, a in enumerate(cmd) if a == "--cf-host"] == ["h1", "h2"]
    assert any(a.endswith("test_network.py") for a in cmd) and not any(a.endswith("test_kernel.py") for a in cmd)
    assert cmd[cmd.index("-n") + 1] == "3" and "--cf-ssh-config" in cmd


@pytest.mark.parametrize(("hosts", "cpus", "workers"), [(1, 8, 1), (8, 8, 1), (9, 8, 2), (64, 8, 8), (64, 2, 2),
                                                        (1000, 64, 8)])
def test_default_workers(monkeypatch, hosts, cpus, workers):
    monkeypatch.setattr("os.cpu_count", lambda: cpus)
    assert default_workers(hosts) == workers


def test_host_with_no_planned_mounts_runs(rendered_lab, tmp_path):
    """An empty parameter set (no mounts planned) is reported as a hostless skip, not a crash."""
    import shutil

    import yaml

    copy = tmp_path / "rendered"
    shutil.copytree(rendered_lab, copy)
    hv_path = copy / "ansible" / "host_vars" / f"{HOST}.yml"
    hv = yaml.safe_load(hv_path.read_text())
    hv["cf_storage"]["mounts"] = []
    hv_path.write_text(yaml.safe_dump(hv))
    result = run_checks(copy, "local", [HOST], None, None, concerns=["mounts"])
    assert result.records and all(r["outcome"] == "skipped" and r["host"] is None for r in result.records)
    assert result.per_host[HOST].passed == result.per_host[HOST].failed == 0 and result.ok


def test_group_entry_point_infers_the_lab_target(rendered_lab, monkeypatch):
    """clusterforge.verify.runner.run_group_checks(inventory, limit=group, ssh_config=...): the lab target inferred."""
    from clusterforge.lab.sshcfg import ssh_config_path
    from clusterforge.verify import runner

    seen = {}
    monkeypatch.setattr(runner, "run_checks", lambda *a, **kw: seen.update(args=a, kwargs=kw))
    runner.run_group_checks(rendered_lab, limit="su01", ssh_config=ssh_config_path("cfverify"))
    assert seen["args"][1] == "lab" and seen["kwargs"]["group"] == "su01"
    runner.run_group_checks(rendered_lab, limit="servers", ssh_config="/etc/ssh/other_config")
    assert seen["args"][1] == "ssh"


def test_failures_flattened_for_callers(local_result):
    result, _ = local_result
    assert result.failures and all(line.startswith(f"{HOST} ") for line in result.failures)
    assert len(result.failures) == result.failed
