"""SIMULATED, skipped and unchecked: a check that cannot read a planned fact is SIMULATED on the lab where the lab
simulates the part it needs, a skip with the reason on the lab otherwise, and a failure naming the host, the fact
and why on any other target (issue #47). `verify` counts passed, failed, simulated and skipped apart."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from clusterforge.cli import verify as cli_verify
from clusterforge.targets import LAB, LOCAL, REACHES, SIMULATED_PARTS, SSH
from clusterforge.verify import runner
from clusterforge.verify.hosts import _gates
from clusterforge.verify.hosts._gates import GPUS, HOST_KERNEL, RDMA_NICS, Unchecked, resolve
from clusterforge.verify.layer_check import LayerCheck
from clusterforge.verify.runner import aggregate

HOST = "su01-r01-gpu01"
DECLARATION = Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml"


# --- the reaches ------------------------------------------------------------------------------------------------

def test_only_the_lab_simulates_and_only_the_lab_tolerates_unchecked_facts():
    assert LAB.simulates == frozenset(SIMULATED_PARTS) and not LAB.fails_unchecked
    for reach in (SSH, LOCAL):
        assert reach.simulates == frozenset() and reach.fails_unchecked
    assert {GPUS, RDMA_NICS, HOST_KERNEL} == set(SIMULATED_PARTS)


def test_an_unknown_part_is_refused():
    with pytest.raises(ValueError, match="unknown part"):
        Unchecked("a fact", "why", "flux capacitor")


# --- resolve: the outcome of an unchecked planned fact by reach ------------------------------------------------

def test_lab_resolves_a_simulated_part_as_simulated_naming_it():
    r = resolve(Unchecked("the 2 planned GPU(s)", "no /dev/nvidia* here", GPUS), LAB, HOST)
    assert r.outcome == "simulated" and r.simulated == SIMULATED_PARTS[GPUS]
    assert r.message == "SIMULATED GPUs: the 2 planned GPU(s) not checked: no /dev/nvidia* here"


def test_lab_keeps_an_unchecked_fact_of_no_simulated_part_a_skip_with_its_reason():
    r = resolve(Unchecked("the planned systemd units", "systemd is not PID 1"), LAB, HOST)
    assert (r.outcome, r.simulated) == ("skipped", None)
    assert r.message == "the planned systemd units not checked: systemd is not PID 1"


@pytest.mark.parametrize("reach", [SSH, LOCAL], ids=lambda r: r.name)
@pytest.mark.parametrize("part", [GPUS, RDMA_NICS, HOST_KERNEL, None])
def test_outside_the_lab_an_unchecked_fact_fails_naming_host_fact_and_why(reach, part):
    r = resolve(Unchecked("the planned RoCE NICs", "no RDMA devices", part), reach, HOST)
    assert r.outcome == "failed" and r.simulated is None
    assert HOST in r.message and "the planned RoCE NICs" in r.message and "no RDMA devices" in r.message
    assert r.message.startswith("UNCHECKED") and reach.name in r.message


# --- the gates raise Unchecked for planned facts, skip for unplanned ones ----------------------------------------

class FakeFacts:
    def __init__(self, devices=(), container=None, systemd=True, commands=None):
        self._devices, self._container, self._systemd = list(devices), container, systemd
        self._commands = commands or {}

    def gpu_device_nodes(self):
        return self._devices

    def container(self):
        return self._container

    def systemd_running(self):
        return self._systemd

    def which(self, name):
        return None

    def run(self, command, *args):
        return type("R", (), {"rc": 0, "stdout": self._commands.get(command, ""), "stderr": ""})()


def test_gpus_planned_but_absent_in_a_container_are_unchecked_needing_the_gpus():
    with pytest.raises(Unchecked) as exc:
        _gates.require_gpus_visible(FakeFacts(container="systemd-nspawn"), {"cf_gpu_count": 2})
    assert exc.value.part == GPUS and "2 planned GPU" in exc.value.fact and "systemd-nspawn" in exc.value.why


def test_gpus_planned_with_a_userland_only_driver_are_unchecked():
    with pytest.raises(Unchecked) as exc:
        _gates.require_gpus_visible(FakeFacts(), {"cf_gpu_count": 1,
                                                  "cf_software": {"nvidia_kernel_module": "skip"}})
    assert exc.value.part == GPUS and "userland-only" in exc.value.why


def test_no_gpu_planned_is_a_plain_skip_not_an_unchecked_fact():
    with pytest.raises(pytest.skip.Exception, match="plans no GPU"):
        _gates.require_gpus_visible(FakeFacts(container="systemd-nspawn"), {"cf_gpu_count": 0})


def test_gpus_missing_on_a_machine_that_loads_the_module_fail():
    with pytest.raises(pytest.fail.Exception, match="kernel module is not loaded"):
        _gates.require_gpus_visible(FakeFacts(), {"cf_gpu_count": 2})


def test_no_systemd_is_unchecked_of_no_simulated_part():
    with pytest.raises(Unchecked) as exc:
        _gates.require_systemd(FakeFacts(systemd=False))
    assert exc.value.part is None and "systemd" in exc.value.fact


def _host_check(name):
    import importlib

    return importlib.import_module(f"clusterforge.verify.hosts.test_{name}")


def test_roce_planned_without_rdma_devices_is_unchecked_needing_rdma_nics():
    roce = _host_check("roce")
    with pytest.raises(Unchecked) as exc:
        roce._require_roce(FakeFacts(), {"cf_roce": {"enabled": True}})
    assert exc.value.part == RDMA_NICS
    with pytest.raises(pytest.skip.Exception, match="enabled is false"):
        roce._require_roce(FakeFacts(), {"cf_roce": {"enabled": False}})
    ls = "ls -1 /sys/class/infiniband 2>/dev/null; true"
    assert roce._require_roce(FakeFacts(commands={ls: "mlx5_0\n"}), {"cf_roce": {"enabled": True}})["enabled"]


def test_container_runtime_unchecked_only_where_gpus_are_planned():
    runtime = _host_check("container_runtime")
    with pytest.raises(Unchecked) as exc:
        runtime._require_applicable(FakeFacts(), {"cf_gpu_count": 2})
    assert exc.value.part == GPUS
    with pytest.raises(pytest.skip.Exception, match="no GPU planned"):
        runtime._require_applicable(FakeFacts(), {"cf_gpu_count": 0})


def test_time_sync_in_a_container_is_unchecked_needing_the_host_kernel():
    with pytest.raises(Unchecked) as exc:
        _host_check("time")._require_own_kernel(FakeFacts(container="systemd-nspawn"))
    assert exc.value.part == HOST_KERNEL


# --- end to end: the conftest's resolution and the report plugin, through pytest --------------------------------

CHECKS = textwrap.dedent('''
    import pytest

    from clusterforge.verify.hosts._gates import GPUS, unchecked


    def test_gpu_fact(cf_host_name):
        unchecked("the 2 planned GPU(s)", "no /dev/nvidia* here", GPUS)


    def test_unit_fact(cf_host_name):
        unchecked("the planned systemd units", "systemd is not PID 1 here")


    def test_not_planned(cf_host_name):
        pytest.skip("nothing planned here")


    def test_real(cf_host_name):
        assert cf_host_name
''')


@pytest.fixture(scope="module")
def checks_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("checks")
    (directory / "test_fake.py").write_text(CHECKS)
    (directory / "ssh_config").write_text("Host *\n  BatchMode yes\n")
    return directory


def _run(checks_dir: Path, rendered_lab: Path, target: str) -> tuple[int, list[dict]]:
    records = checks_dir / f"records-{target}.json"
    cmd = [sys.executable, "-m", "pytest", str(checks_dir / "test_fake.py"),
           "-p", "clusterforge.verify.hosts.conftest", "-p", "clusterforge.verify.hosts._report",
           "--cf-report-json", str(records), "--cf-inventory", str(rendered_lab), "--cf-target", target,
           "--cf-host", HOST, "--cf-ssh-config", str(checks_dir / "ssh_config"),
           "--rootdir", str(checks_dir), "-c", "/dev/null", "-p", "no:cacheprovider", "-q"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=runner._env(), timeout=300)
    assert records.is_file(), proc.stdout + proc.stderr
    return proc.returncode, json.loads(records.read_text())["records"]


@pytest.fixture(scope="module")
def by_target(checks_dir, rendered_lab):
    return {t: _run(checks_dir, rendered_lab, t) for t in ("lab", "ssh")}


def _outcomes(records):
    return {r["test"].split("::")[1].split("[")[0]: r for r in records}


def test_lab_records_simulated_skipped_and_passed(by_target):
    rc, records = by_target["lab"]
    got = _outcomes(records)
    assert {k: r["outcome"] for k, r in got.items()} == {
        "test_gpu_fact": "simulated", "test_unit_fact": "skipped", "test_not_planned": "skipped",
        "test_real": "passed"}
    assert got["test_gpu_fact"]["simulated"] == SIMULATED_PARTS[GPUS]
    assert got["test_gpu_fact"]["message"].startswith("SIMULATED GPUs: the 2 planned GPU(s) not checked")
    assert "simulated" not in got["test_unit_fact"] and rc == 0


def test_ssh_records_unchecked_facts_as_failures_naming_host_fact_and_why(by_target):
    rc, records = by_target["ssh"]
    got = _outcomes(records)
    assert {k: r["outcome"] for k, r in got.items()} == {
        "test_gpu_fact": "failed", "test_unit_fact": "failed", "test_not_planned": "skipped",
        "test_real": "passed"}
    for name, fact, why in (("test_gpu_fact", "the 2 planned GPU(s)", "no /dev/nvidia* here"),
                            ("test_unit_fact", "the planned systemd units", "systemd is not PID 1 here")):
        message = got[name]["message"]
        assert HOST in message and fact in message and why in message, message
        assert got[name]["unchecked"] == fact
    assert rc == 1


def test_aggregate_of_the_lab_run_counts_four_outcomes_apart_and_is_ok(by_target):
    result = aggregate(by_target["lab"][1], [HOST], LAB)
    assert (result.passed, result.failed, result.simulated, result.skipped) == (1, 0, 1, 2)
    assert result.ok
    assert result.simulated_parts == {SIMULATED_PARTS[GPUS]: [HOST]}


def test_aggregate_of_the_ssh_run_is_not_ok(by_target):
    result = aggregate(by_target["ssh"][1], [HOST], SSH)
    assert (result.passed, result.failed, result.simulated, result.skipped) == (1, 2, 0, 1)
    assert not result.ok and len(result.failures) == 2


# --- aggregate and the report ----------------------------------------------------------------------------------

def rec(host, test, outcome, message="", **extra):
    return {"host": host, "test": test, "outcome": outcome, "message": message, "nodeid": f"x::{test}", **extra}


SIM = rec("a", "driver::test_gpu_model[a/gpu0]", "simulated", "SIMULATED GPUs: ...", simulated="GPUs: none")


def test_a_simulated_record_is_neither_a_pass_nor_a_skip():
    result = aggregate([SIM, rec("a", "kernel::t[a]", "passed"), rec("a", "time::t[a]", "skipped", "n/a")], ["a"])
    hr = result.per_host["a"]
    assert (hr.passed, hr.failed, hr.simulated, hr.skipped) == (1, 0, 1, 1)
    assert hr.simulations == [{"test": SIM["test"], "message": SIM["message"], "simulated": "GPUs: none"}]
    assert result.ok


def test_a_simulated_record_under_a_reach_that_simulates_nothing_fails():
    result = aggregate([SIM], ["a"], SSH)
    assert (result.failed, result.simulated) == (1, 0) and not result.ok
    assert "simulates nothing" in result.per_host["a"].failures[0]["message"]
    assert aggregate([SIM], ["a"], LAB).ok


def test_the_json_report_carries_the_four_totals(tmp_path):
    result = aggregate([SIM, rec("a", "kernel::t[a]", "failed", "boom")], ["a"])
    runner.write_report(result, tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["totals"] == {"passed": 0, "failed": 1, "simulated": 1, "skipped": 0}
    assert data["hosts"]["a"]["simulated"] == 1 and data["hosts"]["a"]["simulations"][0]["simulated"] == "GPUs: none"
    assert data["ok"] is False


# --- the CLI: text and JSON output, exit codes ---------------------------------------------------------------

@pytest.fixture
def app():
    app = typer.Typer()
    cli_verify.register(app)
    app.command("noop")(lambda: None)
    return app


def _verify(app, monkeypatch, records, target, *extra):
    def fake_run_checks(inventory_dir, tgt, hosts, ssh_config, report_json, **kw):
        result = aggregate(records, [HOST], REACHES[tgt])
        result.target = tgt
        return result

    monkeypatch.setattr(runner, "run_checks", fake_run_checks)
    return CliRunner().invoke(app, ["verify", str(DECLARATION), "--target", target, "--host", HOST,
                                    "--no-kubernetes", "--no-slurm", "--no-monitoring", *extra])


LAB_RECORDS = [rec(HOST, "driver::test_gpu_model[h/gpu0]", "simulated", "SIMULATED GPUs: the GPUs not checked: x",
                   simulated=SIMULATED_PARTS[GPUS]),
               rec(HOST, "kernel::test_nouveau_blacklisted[h]", "passed"),
               rec(HOST, "time::test_x[h]", "skipped", "no NTP servers declared")]


def test_cli_on_the_lab_counts_simulated_apart_names_what_and_exits_0(app, monkeypatch):
    res = _verify(app, monkeypatch, LAB_RECORDS, "lab")
    assert res.exit_code == 0, res.output
    assert "simulated" in res.output and "skipped" in res.output
    assert f"SIMULATED 1 check(s) on 1 host(s) ({HOST}): {SIMULATED_PARTS[GPUS]}" in " ".join(res.output.split())
    assert "1 check(s) skipped with a reason" in res.output


def test_cli_show_skips_labels_each_simulated_check(app, monkeypatch):
    res = _verify(app, monkeypatch, LAB_RECORDS, "lab", "--show-skips")
    text = " ".join(res.output.split())
    assert f"SIMULATED {HOST} driver::test_gpu_model[h/gpu0]: SIMULATED GPUs" in text
    assert f"skip {HOST} time::test_x[h]: no NTP servers declared" in text


def test_cli_outside_the_lab_exits_1_on_an_unchecked_fact(app, monkeypatch):
    message = f"UNCHECKED on {HOST}: the planned RoCE NICs cannot be checked: no RDMA devices (target ssh: ...)"
    records = [rec(HOST, "roce::test_x[h]", "failed", message, unchecked="the planned RoCE NICs"),
               rec(HOST, "kernel::test_nouveau_blacklisted[h]", "passed")]
    res = _verify(app, monkeypatch, records, "ssh")
    assert res.exit_code == 1, res.output
    assert f"FAIL {HOST} roce::test_x[h]: UNCHECKED on {HOST}: the planned RoCE NICs" in " ".join(res.output.split())


def test_cli_json_has_the_four_totals_and_exit_code(app, monkeypatch):
    res = _verify(app, monkeypatch, LAB_RECORDS, "lab", "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["totals"] == {"passed": 1, "failed": 0, "simulated": 1, "skipped": 1}
    res = _verify(app, monkeypatch, LAB_RECORDS, "ssh", "--format", "json")  # no reach but the lab simulates
    assert res.exit_code == 1 and json.loads(res.stdout)["totals"]["failed"] == 1


# --- the scheduler layers' checks ------------------------------------------------------------------------------

def test_a_layer_check_that_held_on_a_simulated_part_is_simulated_not_passed():
    check = LayerCheck("device plugin", True, "cf-sim-gpu-plugin", "GPUs: cf-sim-gpu-plugin")
    assert check.outcome == "simulated" and check.ok
    assert check.to_dict() == {"check": "device plugin", "ok": True, "outcome": "simulated",
                               "detail": "cf-sim-gpu-plugin", "simulated": "GPUs: cf-sim-gpu-plugin"}
    assert LayerCheck("n", True, "d").outcome == "passed"
    assert LayerCheck("n", False, "d", "GPUs").outcome == "failed"


def test_a_layer_table_labels_simulated_checks(monkeypatch):
    from rich.console import Console

    from clusterforge.cli import _common
    from clusterforge.cli._tables import print_layer
    from clusterforge.schedulers import LayerChecks

    console = Console(record=True, width=200, force_terminal=False)
    monkeypatch.setattr(_common.out, "print", console.print)
    print_layer("kubernetes", LayerChecks((LayerCheck("device plugin", True, "sim plugin", "GPUs: sim"),
                                           LayerCheck("quota a", True, "4")), "", "kubernetes layer"))
    rows = {line.split()[1]: " ".join(line.split()) for line in console.export_text().splitlines()
            if line.startswith("│")}
    assert "│ SIMULATED │" in rows["device"] and "sim plugin; simulated: GPUs: sim" in rows["device"]
    assert "SIMULATED" not in rows["quota"] and "│ ok │" in rows["quota"]
