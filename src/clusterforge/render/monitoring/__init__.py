"""The monitoring files of a plan with a monitoring host (keys of ``RenderedTree.monitoring``, written under
``monitoring/``): prometheus.yml, alertmanager.yml and rules/<group>.yml, which the monitoring role installs, and
Grafana dashboards (dashboards/<name>.json) with their provisioning document (dashboards.yml) for a Grafana the
user runs. Nothing for a plan without one."""

from __future__ import annotations

from clusterforge.plan import Plan
from clusterforge.render.monitoring.alertmanager_yml import alertmanager_config
from clusterforge.render.monitoring.dashboards import DASHBOARDS_DIR, dashboard_json, dashboards, provisioning_document
from clusterforge.render.monitoring.prometheus_yml import prometheus_config
from clusterforge.render.monitoring.rules import rule_groups, rules_document
from clusterforge.render.yamltext import to_yaml

__all__ = ["monitoring_files", "MONITORING_DIR", "RULES_DIR", "PROMETHEUS_CONFIG_DIR", "DASHBOARDS_DIR",
           "GRAFANA_PROVISIONING"]

MONITORING_DIR = "monitoring"
RULES_DIR = "rules"
PROMETHEUS_CONFIG_DIR = "/etc/prometheus"  # where the role installs them (prometheus.yml names the rules there)
GRAFANA_PROVISIONING = "dashboards.yml"  # Grafana's provisioning/dashboards/: reads dashboards/*.json
HEADER = "# Rendered by clusterforge from the Plan. Do not edit: change the inventory declaration.\n"


def monitoring_files(plan: Plan) -> dict[str, str]:
    monitoring = plan.monitoring
    if monitoring is None:
        return {}
    groups = rule_groups(monitoring)
    rules = {f"{RULES_DIR}/{group.name}.yml": HEADER + to_yaml(rules_document(group)) for group in groups}
    installed = [f"{PROMETHEUS_CONFIG_DIR}/{path}" for path in rules]
    return {
        "prometheus.yml": HEADER + to_yaml(prometheus_config(monitoring, plan.cluster, installed)),
        "alertmanager.yml": HEADER + to_yaml(alertmanager_config()),
        **rules,
        **{f"{DASHBOARDS_DIR}/{name}.json": dashboard_json(board) for name, board in dashboards(plan).items()},
        GRAFANA_PROVISIONING: HEADER + to_yaml(provisioning_document(plan.cluster)),
    }
