"""pytest plugin: write one JSON record per check (host, test, outcome, message) for the runner.

Outcomes: passed, failed, skipped, and simulated (a skip the lab's reach resolved as SIMULATED: the record's
``simulated`` says what was simulated). A failure of a planned fact not read carries ``unchecked`` (the fact).

Loaded with ``-p clusterforge.verify.hosts._report --cf-report-json PATH``. Works under
pytest-xdist: the controller receives every worker's reports and alone writes the file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

SCHEMA = "clusterforge.verify-records/1"
MESSAGE_MAX = 2000


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("clusterforge").addoption("--cf-report-json", help="write per-check JSON records here")


def _message(report: pytest.TestReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
        return reason.removeprefix("Skipped: ")
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr or "")
    # Our assertions carry their own sentence; drop pytest's introspection after it.
    text = text.removeprefix("AssertionError: ").split("\nassert ", 1)[0]
    return text.strip()[:MESSAGE_MAX]


def _test_name(nodeid: str) -> str:
    """``.../test_network.py::test_interface_mtu[h/rail0]`` -> ``network::test_interface_mtu[h/rail0]``."""
    path, _, rest = nodeid.partition("::")
    module = Path(path).stem.removeprefix("test_")
    return f"{module}::{rest}"


class _Recorder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, dict[str, Any]] = {}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        host = dict(report.user_properties).get("cf_host")
        rec = self.records.setdefault(report.nodeid, {
            "nodeid": report.nodeid, "test": _test_name(report.nodeid), "host": host,
            "outcome": "passed", "message": "", "duration_s": 0.0,
        })  # fmt: skip
        rec["duration_s"] = round(rec["duration_s"] + report.duration, 3)
        properties = dict(report.user_properties)
        unreachable = properties.get("cf_unreachable")
        if unreachable is not None:
            rec["unreachable"] = str(unreachable)[:MESSAGE_MAX]
        if properties.get("cf_unchecked") is not None:  # a planned fact not read: failed outside the lab
            rec["unchecked"] = str(properties["cf_unchecked"])[:MESSAGE_MAX]
        figures = {k: v for k, v in report.user_properties if not k.startswith("cf_")}
        if figures:  # measurements a check reports (record_property), e.g. throughput_mbps
            rec.setdefault("figures", {}).update(figures)
        if report.failed:
            # A failure in setup/teardown (e.g. the host is unreachable) fails the check too.
            if rec["outcome"] != "failed":
                rec["outcome"], rec["message"] = "failed", _message(report)
                if report.when != "call":
                    rec["message"] = f"[{report.when}] " + rec["message"]
        elif report.skipped and rec["outcome"] == "passed":
            rec["outcome"], rec["message"] = "skipped", _message(report)
            if properties.get("cf_simulated") is not None:  # the lab simulates the part this check needs
                rec["outcome"], rec["simulated"] = "simulated", str(properties["cf_simulated"])

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.records[f"collect:{report.nodeid}"] = {
                "nodeid": report.nodeid, "test": f"collect {report.nodeid}", "host": None,
                "outcome": "failed", "message": str(report.longrepr)[-MESSAGE_MAX:], "duration_s": 0.0,
            }  # fmt: skip

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        data = {"schema": SCHEMA, "exitstatus": int(exitstatus), "records": list(self.records.values())}
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        tmp.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, indent=1, default=str))
        os.replace(tmp, self.path)


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--cf-report-json", None)
    if path and not hasattr(config, "workerinput"):  # xdist workers report to the controller
        config.pluginmanager.register(_Recorder(Path(path)), "clusterforge-verify-recorder")
