"""The rendered Grafana dashboards: they parse back through grafana-foundation-sdk's models (generated from
Grafana's dashboard schema) unchanged, read only series the plan's exporters produce, every PromQL expression
passes promtool, the data source is always the template variable, and Grafana's provisioning document names the
directory they go to."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.models.dashboard import Dashboard, Panel
from grafana_foundation_sdk.models.prometheus import Dataquery as PrometheusQuery
from monitoring_tools import ROOT, tool

from clusterforge.plan.monitoring import DCGM_FIELDS
from clusterforge.render.monitoring import DASHBOARDS_DIR, GRAFANA_PROVISIONING
from clusterforge.render.monitoring.dashboards import EXPORTER_METRICS, GRAFANA_DASHBOARDS_PATH
from clusterforge.render.monitoring.rules import rule_groups

# Grafana's own variables, as promtool will take them (a range, in a range selector)
GRAFANA_RANGES = {"$__rate_interval": "1m", "$__range": "1h"}
# PromQL words that look like metric names: functions, aggregations, keywords, label names in by/on/unless
PROMQL_WORDS = {"sum", "count", "by", "on", "or", "and", "unless", "rate", "increase", "histogram_quantile",
                "vector", "label_replace", "floor", "le", "cluster_queue", "resource", "instance"}


@pytest.fixture(scope="module")
def boards(lab_monitoring: dict[str, str]) -> dict[str, dict]:
    return {path: json.loads(text) for path, text in lab_monitoring.items() if path.startswith(f"{DASHBOARDS_DIR}/")}


def _panels(board: dict) -> list[dict]:
    out = []
    for panel in board.get("panels", []):
        out.append(panel)
        out.extend(panel.get("panels", []))
    return out


def _exprs(board: dict) -> list[str]:
    return [target["expr"] for panel in _panels(board) for target in panel.get("targets", [])]


def _metrics(expr: str) -> set[str]:
    """The metric names EXPR reads: its words less strings, selectors' label matchers, ranges, grouping labels
    and PromQL's own words."""
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\b(?:by|on|without|ignoring)\s*\([^)]*\)", " ", bare)
    names = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", re.sub(r"\b\d[\d.eE+-]*", " ", bare)))
    return names - PROMQL_WORDS


def test_the_lab_gets_every_dashboard(boards: dict[str, dict]) -> None:
    assert sorted(boards) == [f"{DASHBOARDS_DIR}/{n}.json" for n in ("fabric", "gpu", "nodes", "scheduling")]


def test_dashboards_round_trip_through_the_sdk_models(boards: dict[str, dict]) -> None:
    register_default_plugins()  # the panel types' options and the Prometheus query model
    for path, board in boards.items():
        model = Dashboard.from_json(board)
        queries = [t for p in model.panels or [] if isinstance(p, Panel) for t in p.targets or []]
        assert queries and all(isinstance(q, PrometheusQuery) for q in queries), path
        assert json.loads(json.dumps(model, cls=JSONEncoder)) == board, path


def test_every_panel_reads_the_datasource_variable(boards: dict[str, dict]) -> None:
    for path, board in boards.items():
        variables = {v["name"]: v for v in board["templating"]["list"]}
        assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
        for panel in _panels(board):
            if panel["type"] == "row":
                continue
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, (path, panel["title"])
            assert all(t["datasource"] == panel["datasource"] for t in panel["targets"]), (path, panel["title"])
        assert len(re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}", json.dumps(board))) == 0, path  # no data source UIDs


def test_queries_read_only_series_the_exporters_produce(boards: dict[str, dict], lab_plan) -> None:
    ruled = {m for group in rule_groups(lab_plan.monitoring) for rule in group.rules for m in _metrics(rule.expr)}
    known = ruled | set(DCGM_FIELDS) | set(EXPORTER_METRICS)
    for path, board in boards.items():
        for expr in _exprs(board):
            assert _metrics(expr) and _metrics(expr) <= known, (path, expr, _metrics(expr) - known)


def test_the_extra_node_exporter_series_come_from_enabled_collectors() -> None:
    defaults = yaml.safe_load((ROOT / "roles" / "node_exporter" / "defaults" / "main.yml").read_text())
    enabled = set(defaults["node_exporter_collectors_enabled"])
    for metric, source in EXPORTER_METRICS.items():
        if source.startswith("node_exporter "):
            assert source.split()[1] in enabled, metric


def test_every_expression_passes_promtool(boards: dict[str, dict], tmp_path: Path) -> None:
    rules = []
    for path, board in boards.items():
        for number, expr in enumerate(_exprs(board)):
            for variable, value in GRAFANA_RANGES.items():
                expr = expr.replace(variable, value)
            rules.append({"record": f"dashboard:{Path(path).stem}:{number}", "expr": expr})
    (tmp_path / "dashboards.yml").write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    done = subprocess.run([tool("promtool"), "check", "rules", str(tmp_path / "dashboards.yml")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(rules)} rules found" in done.stdout, done.stdout
    assert len(rules) >= 30


def test_the_provisioning_document_is_a_file_provider(lab_monitoring: dict[str, str]) -> None:
    document = yaml.safe_load(lab_monitoring[GRAFANA_PROVISIONING])
    assert document["apiVersion"] == 1
    [provider] = document["providers"]
    assert provider["type"] == "file" and provider["options"]["path"] == GRAFANA_DASHBOARDS_PATH


def test_declared_names_reach_the_json_escaped(lab_plan) -> None:
    """A hostile cluster name (quotes, backslashes, a script tag) stays a string: the JSON parses and the name
    comes back as declared; the UID keeps Grafana's grammar."""
    from dataclasses import replace

    from clusterforge.render.monitoring.dashboards import dashboard_json, dashboards

    name = 'lab"}, "x": "</script>\\'
    for board in dashboards(replace(lab_plan, cluster=name)).values():
        text = dashboard_json(board)
        parsed = json.loads(text)
        assert parsed["title"].startswith(name) and name in parsed["tags"]
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,40}", parsed["uid"])
        assert text.isascii()


def test_a_dashboard_change_does_not_rerun_the_monitoring_role(lab_plan, tmp_path: Path) -> None:
    """The monitoring step's hash covers what the role installs: Prometheus's files, not Grafana's."""
    from dataclasses import replace

    from clusterforge.pulumi.monitoring import monitoring_args
    from clusterforge.pulumi.settings import StackSettings
    from clusterforge.render.tree import render_tree
    from clusterforge.targets import target

    tree = render_tree(lab_plan)
    settings = StackSettings(repo=ROOT, stack="t", inventory=ROOT / "inventory" / "lab.yaml", target=target("lab"),
                             work_dir=tmp_path, switch_config_dir=tmp_path, provision=True, verify=False)

    def hashed(monitoring: dict[str, str]) -> str:
        args = monitoring_args(lab_plan, replace(tree, monitoring=monitoring), settings, "roles")
        assert args is not None
        return args.host_vars_hash

    files = dict(tree.monitoring)
    grafana = {path: text + " " for path, text in files.items() if path.startswith(DASHBOARDS_DIR)}
    assert hashed({**files, **grafana}) == hashed(files)
    assert hashed({**files, "prometheus.yml": files["prometheus.yml"] + "\n"}) != hashed(files)
