"""Per-host aggregation of check records and the JSON report."""

from __future__ import annotations

import json

import pytest

from clusterforge.verify.runner import VerifyResult, aggregate, write_report


def rec(host, test, outcome, message=""):
    return {"host": host, "test": test, "outcome": outcome, "message": message, "nodeid": f"x::{test}"}


RECORDS = [
    rec("a", "network::test_interface_mtu[a/rail0]", "failed", "rail0 MTU is 1500, planned 9000"),
    rec("a", "network::test_interface_mtu[a/rail1]", "passed"),
    rec("a", "driver::test_nvidia_smi_gpu_count[a]", "skipped", "no /dev/nvidia*"),
    rec("b", "network::test_interface_mtu[b/rail0]", "passed"),
]


def test_counts_per_host():
    result = aggregate(RECORDS, ["a", "b"])
    assert (result.per_host["a"].passed, result.per_host["a"].failed, result.per_host["a"].skipped) == (1, 1, 1)
    assert (result.per_host["b"].passed, result.per_host["b"].failed, result.per_host["b"].skipped) == (1, 0, 0)


def test_totals_are_the_sum_of_hosts():
    result = aggregate(RECORDS, ["a", "b"])
    assert (result.passed, result.failed, result.skipped) == (2, 1, 1)


def test_failures_carry_test_and_message():
    result = aggregate(RECORDS, ["a", "b"])
    assert result.per_host["a"].failures == [
        {"test": "network::test_interface_mtu[a/rail0]", "message": "rail0 MTU is 1500, planned 9000"}
    ]


def test_skips_keep_their_reason():
    assert aggregate(RECORDS).per_host["a"].skips[0]["message"] == "no /dev/nvidia*"


def test_host_without_records_is_listed():
    result = aggregate(RECORDS, ["a", "b", "c"])
    assert result.per_host["c"].passed == result.per_host["c"].failed == result.per_host["c"].skipped == 0


def test_one_failure_makes_the_result_not_ok():
    assert not aggregate(RECORDS).ok
    assert aggregate([r for r in RECORDS if r["outcome"] != "failed"]).ok


def test_hostless_failure_is_a_run_error():
    result = aggregate([rec(None, "collect test_x.py", "failed", "ImportError: boom")])
    assert result.errors == ["collect test_x.py: ImportError: boom"]
    assert not result.ok


def test_unknown_outcome_is_rejected():
    with pytest.raises(ValueError):
        aggregate([rec("a", "t", "xpassed")])


def test_report_json(tmp_path):
    result = aggregate(RECORDS, ["a", "b"])
    result.target = "lab"
    path = tmp_path / "out" / "report.json"
    write_report(result, path, started="t0")
    data = json.loads(path.read_text())
    assert data["ok"] is False and data["target"] == "lab" and data["started"] == "t0"
    assert data["totals"] == {"passed": 2, "failed": 1, "simulated": 0, "skipped": 1}
    assert data["hosts"]["a"]["failed"] == 1 and len(data["records"]) == 4


def test_empty_result_is_ok():
    assert VerifyResult(per_host={}).ok


def test_unreachable_host_counts_once_with_its_reason():
    why = "ssh: connect to host 198.18.8.11 port 22: Connection refused"
    records = [dict(rec("a", f"kernel::test_{i}[a]", "failed", f"a unreachable: {why}"), unreachable=why)
               for i in range(71)] + RECORDS[3:]
    result = aggregate(records, ["a", "b"])
    assert result.unreachable == {"a": why}
    assert (result.per_host["a"].failed, result.failed, result.passed) == (1, 1, 1)
    assert result.failures == [f"a unreachable: {why}"]
    assert not result.ok
