"""The health core, pure: Xid and EDAC lines to evidence, the doctor's findings and the other sources to
evidence, evidence to one verdict and one action, and the climb up the ladder after a failed repair."""

from __future__ import annotations

import pytest

from clusterforge.health import Action, Evidence, Status, Verdict, climb, judge, serviceable
from clusterforge.health.report import document, exit_code
from clusterforge.health.sources import alert_evidence, doctor_evidence, service_evidence, verify_evidence
from clusterforge.health.xid import RESET_MARK, SIMULATED_MARK, kernel_log_evidence
from clusterforge.ops.doctor import Finding
from clusterforge.ops.doctor import Status as DoctorStatus

NODE = "su01-r01-gpu01"


def _xid(code: int, pci: str = "PCI:0000:1b:00", mark: str = "") -> str:
    return f"2026-12-06T03:00:00+0000 {NODE} kernel: NVRM: Xid ({pci}): {code}, pid=1234, details{mark}"


@pytest.mark.parametrize(("code", "verdict", "action"), [
    (13, Verdict.WARN, Action.none),  # the application's fault
    (31, Verdict.WARN, Action.none),
    (94, Verdict.WARN, Action.none),  # contained ECC: watched
    (63, Verdict.WARN, Action.reset_gpu),  # a remap that waits for a reset
    (48, Verdict.CRITICAL, Action.reset_gpu),  # double-bit ECC
    (74, Verdict.CRITICAL, Action.reset_gpu),  # NVLink
    (95, Verdict.CRITICAL, Action.reset_gpu),  # uncontained ECC
    (79, Verdict.CRITICAL, Action.reboot),  # off the bus
    (64, Verdict.CRITICAL, Action.rma),  # remap failed
    (999, Verdict.WARN, Action.none),  # not in the table: the operator looks it up
])
def test_each_xid_class_gives_its_verdict_and_action(code, verdict, action):
    health = judge(NODE, kernel_log_evidence(NODE, _xid(code)))
    assert (health.verdict, health.action) == (verdict, action)
    assert f"Xid {code}" in health.evidence[0].summary


def test_the_worst_xid_decides_and_each_code_is_its_own_evidence():
    log = "\n".join([_xid(13), _xid(48, "PCI:0000:2a:00"), _xid(48), "unrelated line", _xid(79)])
    evidence = kernel_log_evidence(NODE, log)
    assert [e.check for e in evidence] == ["kernel:xid-13", "kernel:xid-48", "kernel:xid-79"]
    assert "x2 on PCI:0000:1b:00, PCI:0000:2a:00" in evidence[1].summary
    assert judge(NODE, evidence).action is Action.reboot


def test_a_clean_kernel_log_is_one_ok_evidence():
    assert [(e.check, e.status) for e in kernel_log_evidence(NODE, "nothing here\n")] == [("kernel:xid", Status.ok)]


def test_edac_lines_count_per_controller_and_kind():
    log = ("EDAC MC0: 2 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0\n"
           "EDAC MC0: 3 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0\n"
           "EDAC MC1: 1 UE memory read error on CPU_SrcID#1_Ha#0_Chan#0_DIMM#0\n")
    evidence = {e.check: e for e in kernel_log_evidence(NODE, log)}
    assert evidence["kernel:ecc-ce"].status is Status.warn and "5 corrected" in evidence["kernel:ecc-ce"].summary
    assert evidence["kernel:ecc-ue"].status is Status.fail and evidence["kernel:ecc-ue"].action is Action.rma


def test_a_drill_line_is_marked_simulated_and_a_real_one_is_not():
    drilled = judge(NODE, kernel_log_evidence(NODE, _xid(79, mark=f" {SIMULATED_MARK}")))
    real = judge(NODE, kernel_log_evidence(NODE, _xid(79)))
    assert drilled.simulated and drilled.to_dict()["simulated"] is True
    assert not real.simulated and "simulated" not in real.to_dict()


def test_no_evidence_and_only_skips_are_unknown_never_pass():
    assert judge(NODE, []).verdict is Verdict.UNKNOWN
    skipped = [Evidence(NODE, "doctor:nvlink", Status.skip, "no NVLink here")]
    assert judge(NODE, skipped).verdict is Verdict.UNKNOWN


def test_unknown_ranks_above_warn_and_below_critical_and_takes_no_action():
    warn = Evidence(NODE, "a", Status.warn, "degraded", Action.drain)
    unknown = Evidence(NODE, "b", Status.unknown, "could not run")
    fail = Evidence(NODE, "c", Status.fail, "down", Action.reboot)
    assert (judge(NODE, [warn]).verdict, judge(NODE, [warn]).action) == (Verdict.WARN, Action.drain)
    assert (judge(NODE, [warn, unknown]).verdict, judge(NODE, [warn, unknown]).action) == (Verdict.UNKNOWN,
                                                                                             Action.none)
    assert (judge(NODE, [warn, unknown, fail]).verdict, judge(NODE, [fail, unknown]).action) == (
        Verdict.CRITICAL, Action.reboot)


@pytest.mark.parametrize(("last", "own", "expected"), [
    (None, Action.drain, Action.drain),
    (Action.drain, Action.drain, Action.reset_gpu),
    (Action.reset_gpu, Action.drain, Action.reboot),
    (Action.reboot, Action.drain, Action.reimage),
    (Action.reimage, Action.drain, Action.rma),
    (Action.rma, Action.drain, Action.rma),  # the top stays the top
    (Action.drain, Action.reboot, Action.reboot),  # the evidence's own rung when it is higher
])
def test_a_node_that_fails_again_climbs_the_ladder(last, own, expected):
    health = judge(NODE, [Evidence(NODE, "x", Status.fail, "down", own)])
    assert climb(health, last) is expected


def test_a_node_that_asks_for_nothing_does_not_climb():
    healthy = judge(NODE, [Evidence(NODE, "x", Status.ok, "fine")])
    app_fault = judge(NODE, kernel_log_evidence(NODE, _xid(13)))
    assert climb(healthy, Action.reboot) is Action.none and serviceable(healthy)
    assert climb(app_fault, Action.drain) is Action.none and serviceable(app_fault)
    assert not serviceable(judge(NODE, kernel_log_evidence(NODE, _xid(63))))


def _finding(check: str, status: DoctorStatus, summary: str = "s", evidence: str = "") -> Finding:
    return Finding(check, status, summary, evidence)


def test_doctor_failures_map_to_their_rungs():
    findings = [_finding("data-links", DoctorStatus.fail, "rail0 is down"),
                _finding("nvlink", DoctorStatus.fail), _finding("driver-version", DoctorStatus.fail),
                _finding("pfc", DoctorStatus.warn), _finding("mounts", DoctorStatus.ok)]
    got = {e.check: (e.status, e.action) for e in doctor_evidence(NODE, findings, None)}
    assert got == {"doctor:data-links": (Status.fail, Action.drain), "doctor:nvlink": (Status.fail, Action.reset_gpu),
                   "doctor:driver-version": (Status.fail, Action.reboot), "doctor:pfc": (Status.warn, Action.none),
                   "doctor:mounts": (Status.ok, Action.none)}


def test_missing_gpus_in_a_container_are_not_checked_but_on_a_machine_they_fail():
    finding = _finding("gpu-visible", DoctorStatus.fail, "0 of 8 planned GPUs on the PCI bus",
                       "PCI bus: 0 NVIDIA GPU(s)\nnvidia-smi: not installed")
    [in_lab] = doctor_evidence(NODE, [finding], "systemd-nspawn")
    [on_metal] = doctor_evidence(NODE, [finding], None)
    assert in_lab.status is Status.skip and "systemd-nspawn container (no GPU passed through)" in in_lab.summary
    assert (on_metal.status, on_metal.action) == (Status.fail, Action.reboot)
    rdma = _finding("ib-links", DoctorStatus.fail, "no RDMA (InfiniBand/RoCE) device", "/sys/class/infiniband is empty")
    assert doctor_evidence(NODE, [rdma], "systemd-nspawn")[0].status is Status.skip
    assert doctor_evidence(NODE, [rdma], None)[0].action is Action.drain
    down = _finding("ib-links", DoctorStatus.fail, "RDMA port(s) not ACTIVE: mlx5_0/1", "mlx5_0/1: DOWN")
    assert doctor_evidence(NODE, [down], "systemd-nspawn")[0].status is Status.fail  # present, and down


def test_a_driver_without_its_kernel_module_is_not_checked_in_a_container_but_fails_on_a_machine():
    """The lab's hosts have the driver's user space (nvidia-smi: the driver role installs no module in a
    container) and the machine's kernel: nvidia-smi finds no module there, which says nothing about the node."""
    no_module = _finding("driver-version", DoctorStatus.fail, "the nvidia kernel module is not loaded",
                         "kernel module: not loaded\nnvidia-smi: NVIDIA-SMI has failed because it couldn't"
                         " communicate with the NVIDIA driver.")
    [in_lab] = doctor_evidence(NODE, [no_module], "systemd-nspawn")
    [on_metal] = doctor_evidence(NODE, [no_module], None)
    assert (in_lab.status, in_lab.action) == (Status.skip, Action.none)
    assert "without the NVIDIA module" in in_lab.summary and "not loaded" in in_lab.summary
    assert (on_metal.status, on_metal.action) == (Status.fail, Action.reboot)
    mismatch = _finding("driver-version", DoctorStatus.fail, "kernel module 535.104 != user space 535.261",
                        "kernel module: 535.104\nnvidia-smi: 535.261.03")
    assert doctor_evidence(NODE, [mismatch], "systemd-nspawn")[0].status is Status.fail  # a module, and wrong


def test_an_unreachable_node_and_a_broken_check_are_unknown():
    findings = [_finding("reachable", DoctorStatus.fail, f"{NODE} unreachable: no route")]
    assert judge(NODE, doctor_evidence(NODE, findings, None)).verdict is Verdict.UNKNOWN
    broken = _finding("mounts", DoctorStatus.warn, "the check could not run: OSError: boom")
    assert doctor_evidence(NODE, [broken], None)[0].status is Status.unknown


def test_services_enabled_but_stopped_fail_and_others_say_nothing():
    output = "kubelet|enabled|inactive\nslurmd||\nmunge|disabled|inactive\n"
    evidence = service_evidence(NODE, ("kubelet", "slurmd", "munge", "prometheus-node-exporter"), output)
    got = {e.check: (e.status, e.action) for e in evidence}
    assert got == {"services:kubelet": (Status.fail, Action.drain),
                   "services:prometheus-node-exporter": (Status.unknown, Action.none)}


def test_verify_records_by_node_with_unreachable_and_silent_nodes_unknown():
    records = [{"host": NODE, "test": "roce::test_mtu[rail0]", "outcome": "failed", "message": "MTU 1500"},
               {"host": NODE, "test": "network::test_up", "outcome": "passed"},
               {"host": "b", "test": "roce::x", "outcome": "failed", "unreachable": "timeout"},
               {"host": "b", "test": "roce::y", "outcome": "failed", "unreachable": "timeout"},
               {"host": "stranger", "test": "x", "outcome": "failed"}]
    found = verify_evidence(records, [NODE, "b", "c"])
    assert judge(NODE, found[NODE]).action is Action.drain
    assert [e.status for e in found["b"]] == [Status.unknown]
    assert [e.check for e in found["c"]] == ["verify:records"] and found["c"][0].status is Status.unknown


def test_alerts_name_their_node_and_severity_decides():
    alerts = [{"labels": {"alertname": "KubeletDown", "instance": f"{NODE}:10250", "severity": "critical"},
               "status": {"state": "active"}},
              {"labels": {"alertname": "HighTemp", "node": NODE, "severity": "warning"}},
              {"labels": {"alertname": "Old", "node": NODE, "severity": "critical"}, "status": {"state": "suppressed"}},
              {"labels": {"alertname": "Elsewhere", "node": "not-ours", "severity": "critical"}}]
    found = alert_evidence(alerts, [NODE])
    assert [(e.check, e.status) for e in found[NODE]] == [("alert:KubeletDown", Status.fail),
                                                        ("alert:HighTemp", Status.warn)]


@pytest.mark.parametrize("document_", [{"alerts": []}, [1], [{"labels": "x"}]])
def test_a_malformed_alert_document_is_refused_by_name(document_):
    with pytest.raises(ValueError, match="expected"):
        alert_evidence(document_, [NODE])


def test_the_report_and_its_exit_code_follow_the_worst_verdict():
    ok = judge("a", [Evidence("a", "x", Status.ok, "fine")])
    warn = judge("b", [Evidence("b", "x", Status.warn, "meh")])
    unknown = judge("c", [])
    critical = judge("d", [Evidence("d", "x", Status.fail, "down", Action.drain)])
    assert exit_code([ok]) == 0 and exit_code([ok, warn]) == 1 and exit_code([ok, warn, unknown]) == 3
    assert exit_code([unknown, critical]) == 1
    doc = document([ok, critical])
    assert doc["worst"] == "CRITICAL"
    assert doc["nodes"][1] == {"name": "d", "verdict": "CRITICAL", "action": "drain",
                               "evidence": [{"check": "x", "status": "fail", "summary": "down", "action": "drain"}]}


def test_a_gpu_reset_mark_answers_the_xid_lines_before_it_but_not_those_after_or_above_its_rung():
    """remediate's reset_gpu writes RESET_MARK into the kernel log: the reset-class lines before it stop counting,
    a reboot-class line (79) does not, and a line after the reset counts again."""
    mark = f"2026-12-06T03:05:00+0000 {NODE} kernel: {RESET_MARK} (nvidia-smi --gpu-reset)"
    cleared = kernel_log_evidence(NODE, "\n".join([_xid(48), _xid(48), mark]))
    assert [(e.check, e.status) for e in cleared] == [("kernel:gpu-reset", Status.ok)]
    assert "Xid 48 x2" in cleared[0].summary and judge(NODE, cleared).verdict is Verdict.PASS
    above = judge(NODE, kernel_log_evidence(NODE, "\n".join([_xid(79), _xid(48), mark])))
    assert (above.verdict, above.action) == (Verdict.CRITICAL, Action.reboot)
    again = judge(NODE, kernel_log_evidence(NODE, "\n".join([_xid(48), mark, _xid(48, mark=" later")])))
    assert (again.verdict, again.action) == (Verdict.CRITICAL, Action.reset_gpu)
    assert "x1" in {e.check: e for e in again.evidence}["kernel:xid-48"].summary


def test_the_table_says_simulated_on_a_drill_lines_evidence():
    from clusterforge.health.report import lines

    drilled = judge(NODE, kernel_log_evidence(NODE, _xid(48, mark=f" [{SIMULATED_MARK}]")))
    table = lines([drilled])
    assert table[0].endswith("action reset_gpu (SIMULATED fault)"), table
    assert table[1].endswith("-> reset_gpu [SIMULATED]"), table
