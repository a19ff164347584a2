"""The rendered monitoring files against upstream: promtool check config / check rules, amtool check-config,
and promtool test rules for every alert (fires on a bad series, stays silent on a good one)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from alert_cases import CASES, Case
from monitoring_tools import ROOT, tool

from clusterforge.plan.monitoring import DCGM_FIELDS
from clusterforge.render.monitoring import promql
from clusterforge.render.monitoring.rules import AlertRule, rule_groups


def _run(*argv: str, cwd: Path) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _rules(plan) -> dict[str, AlertRule]:
    return {rule.name: rule for group in rule_groups(plan.monitoring) for rule in group.rules}


def test_prometheus_config_passes_promtool(written: Path) -> None:
    report = _run(tool("promtool"), "check", "config", str(written / "prometheus.yml"), cwd=written)
    assert "SUCCESS" in report and "FAILED" not in report, report


def test_rule_files_pass_promtool(written: Path, lab_plan) -> None:
    files = sorted(str(p) for p in (written / "rules").glob("*.yml"))
    report = _run(tool("promtool"), "check", "rules", *files, cwd=written)
    found = sum(int(n) for n in re.findall(r"SUCCESS: (\d+) rules found", report))
    assert found == len(_rules(lab_plan)) >= 12, report


def test_alertmanager_config_passes_amtool(written: Path) -> None:
    report = _run(tool("amtool"), "check-config", str(written / "alertmanager.yml"), cwd=written)
    assert "SUCCESS" in report, report


def test_every_alert_has_a_case(lab_plan) -> None:
    assert sorted(case.alert for case in CASES) == sorted(_rules(lab_plan))


def _series(series) -> list[dict[str, str]]:
    return [{"series": metric + promql.matchers(**labels), "values": values} for metric, labels, values in series]


def _summary(rule: AlertRule, labels: dict[str, str]) -> str:
    return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], rule.summary)


@pytest.mark.parametrize("case", CASES, ids=[case.alert for case in CASES])
def test_alert_fires_on_the_bad_series_only(case: Case, written: Path, lab_plan) -> None:
    rule = _rules(lab_plan)[case.alert]
    fired = {"exp_labels": {**case.labels, "severity": rule.severity},
             "exp_annotations": {"summary": _summary(rule, case.labels)}}
    tests = [{"interval": "1m", "input_series": _series(series),
              "alert_rule_test": [{"eval_time": f"{case.eval_min}m", "alertname": case.alert, "exp_alerts": expected}]}
             for series, expected in ((case.bad, [fired]), (case.good, []))]
    # the rule holds back for its `for`: a minute before the series has lasted that long, nothing fires
    if rule.for_s and case.eval_min * 60 > rule.for_s:
        tests.append({"interval": "1m", "input_series": _series(case.bad), "alert_rule_test": [
            {"eval_time": f"{rule.for_s // 60 - 1}m", "alertname": case.alert, "exp_alerts": []}]})
    unit = written / f"{case.alert}.test.yml"
    unit.write_text(yaml.safe_dump({"rule_files": sorted(str(p) for p in (written / "rules").glob("*.yml")),
                                    "evaluation_interval": "1m", "tests": tests}, sort_keys=False))
    report = _run(tool("promtool"), "test", "rules", str(unit), cwd=written)
    assert "SUCCESS" in report, report


def test_dcgm_fields_are_the_roles_counters() -> None:
    defaults = yaml.safe_load((ROOT / "roles" / "dcgm_exporter" / "defaults" / "main.yml").read_text())
    assert tuple(metric["field"] for metric in defaults["dcgm_exporter_metrics"]) == DCGM_FIELDS


def test_the_rules_read_only_collected_dcgm_fields(lab_plan) -> None:
    read = {name for rule in _rules(lab_plan).values() for name in re.findall(r"DCGM_FI_\w+", rule.expr)}
    assert read and read <= set(DCGM_FIELDS), read - set(DCGM_FIELDS)


@pytest.mark.parametrize(("value", "literal"), [
    ("/mnt/hot", '"/mnt/hot"'), ('a"b', '"a\\"b"'), ("a\\b", '"a\\\\b"'), ("a\nb", '"a\\nb"'), ("é", '"\\u00e9"'),
])
def test_promql_string_literals_are_escaped(value: str, literal: str) -> None:
    assert promql.string(value) == literal


def test_promql_matchers_refuse_a_bad_label_name() -> None:
    with pytest.raises(ValueError, match="not a Prometheus label name"):
        promql.matchers(**{"bad-name": "x"})
