"""The verify counts `up` prints, read from the reports the Verification resources write."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from clusterforge.ops.verify_summary import verify_lines
from clusterforge.verify.runner import aggregate, write_report


def _rec(host, outcome, **extra):
    return {"host": host, "test": f"kernel::t[{host}]", "outcome": outcome, "message": "m", **extra}


def test_counts_per_group_with_unreachable_and_failing_hosts(tmp_path: Path) -> None:
    now = _dt.datetime.now(_dt.UTC)
    result = aggregate([_rec("a", "passed"), _rec("a", "skipped"), _rec("a", "simulated", simulated="GPUs"),
                        _rec("b", "failed"),
                        _rec("c", "failed", unreachable="ssh: connect to host c port 22: Connection refused")],
                       ["a", "b", "c"])
    write_report(result, tmp_path / "verify" / "su01.json", finished=now.isoformat(timespec="seconds"))
    old = aggregate([_rec("x", "passed")], ["x"])
    write_report(old, tmp_path / "verify" / "su02.json",
                 finished=(now - _dt.timedelta(hours=1)).isoformat(timespec="seconds"))
    lines = verify_lines(tmp_path, now - _dt.timedelta(seconds=5))
    assert lines[0].startswith("verify su01: 3 host(s), 1 passed, 2 failed, 1 simulated, 1 skipped (")
    assert "  host b: 1 check(s) failed" in lines
    assert "  host c unreachable: ssh: connect to host c port 22: Connection refused" in lines
    assert not any("su02" in line for line in lines)  # not checked by this run
