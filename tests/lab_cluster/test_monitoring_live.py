"""The lab's monitoring for real: Prometheus and Alertmanager on ctl-01 (playbooks/monitoring.yml, the rendered
tree's monitoring/ files, the packages from the control image) scraping the real node_exporter of every lab host
(site.yml on the GPU and storage servers, monitoring.yml on the control node). Every planned host's target is up
with its planned identity; a second run of the playbook changes nothing; node_exporter stopped on a GPU server
raises NodeDown for that host in Alertmanager's API and starting it again resolves the alert.

The lab shortens the waits (LAB ONLY): inventory/lab.yaml declares a 5 s scrape interval and playbooks/monitoring.yml
installs NodeDown with `for: 15s` on lab hosts instead of the rendered 2 minutes; every other rule is as rendered.
The kubelet and kube-apiserver jobs need a service account token this session does not make (the Kubernetes
fixture is not used here), so those targets are not asserted. One monitoring per session (the monitoring_cluster
fixture)."""

from __future__ import annotations

import json
import re
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab]


def _plan():
    from clusterforge.loading import load_and_plan

    return load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")[1]


PLAN = _plan()
assert PLAN.monitoring is not None, "inventory/lab.yaml plans monitoring on ctl-01"
NODE_TARGETS = {t.host: t for t in PLAN.monitoring.targets if t.job == "node"}
GPU_SERVERS = sorted(h for h, t in NODE_TARGETS.items() if dict(t.labels).get("role") == "server")
EXPORTER_UNIT = "prometheus-node-exporter"  # roles/node_exporter/vars/Debian.yml
# the lab's waits: a scrape every 5 s, NodeDown's `for` of 15 s, a rule evaluation every 5 s; the deadlines leave
# this shared 2-core machine several times that
UP_WITHIN_S = 60.0
FIRE_WITHIN_S = 120.0
RESOLVE_WITHIN_S = 90.0
_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the lab is reached directly, never by a proxy


def _get(url: str) -> object:
    with _HTTP.open(url, timeout=10) as response:
        return json.load(response)


def _node_targets(prometheus: str) -> dict[str, dict]:
    """Prometheus's active targets of the node job, by their `host` label."""
    data = _get(f"{prometheus}/api/v1/targets?state=active")["data"]["activeTargets"]
    return {t["labels"].get("host", ""): t for t in data if t["labels"].get("job") == "node"}


def _wait_nodes_up(prometheus: str) -> dict[str, dict]:
    deadline = time.monotonic() + UP_WITHIN_S
    while True:
        targets = _node_targets(prometheus)
        down = {h: (targets[h]["health"], targets[h]["lastError"]) if h in targets else "no target"
                for h in NODE_TARGETS if h not in targets or targets[h]["health"] != "up"}
        if not down:
            return targets
        assert time.monotonic() < deadline, f"node targets not up within {UP_WITHIN_S:.0f} s: {down}"
        time.sleep(2)


def _ends(alert: dict) -> datetime:
    """An Alertmanager alert's endsAt (nanoseconds cut to what datetime holds)."""
    text = re.sub(r"(\.\d{6})\d+", r"\1", alert["endsAt"]).replace("Z", "+00:00")
    return datetime.fromisoformat(text)


def _node_down(alertmanager: str) -> dict[str, dict]:
    """The NodeDown alerts Alertmanager holds as active now, by host."""
    now = datetime.now(UTC)
    alerts = _get(f"{alertmanager}/api/v2/alerts")
    return {a["labels"].get("host", ""): a for a in alerts
            if a["labels"].get("alertname") == "NodeDown" and a["status"]["state"] == "active" and _ends(a) > now}


def test_the_monitoring_playbook_converges_and_a_second_run_changes_nothing(monitoring_cluster):
    first, second = monitoring_cluster.first, monitoring_cluster.second
    assert first.ok and second.ok, second.failed_hosts or second.status
    assert monitoring_cluster.host in first.changed_per_host
    changed = {h: n for h, n in second.changed_per_host.items() if n}
    assert not changed, f"the second run changed {changed}: {second.changes}"


def test_every_planned_node_exporter_is_up_with_its_planned_identity(monitoring_cluster):
    targets = _wait_nodes_up(monitoring_cluster.prometheus)
    assert set(targets) == set(NODE_TARGETS), "one node target per planned host, no other"
    for host, planned in NODE_TARGETS.items():
        target = targets[host]
        assert target["scrapeUrl"] == f"http://{planned.address}/metrics"
        assert target["labels"]["instance"] == host
        for key, value in planned.labels:  # host, role, rack and (GPU servers) su
            assert target["labels"].get(key) == value, (host, key, target["labels"])
    # the series come from the host the labels name: node_exporter reports its own host name. (Series without a
    # host label are the Debian package's own config's, which scraped localhost from the image's boot until the
    # playbook replaced it; a restart leaves them no staleness marker, so they stay visible for 5 minutes.)
    query = urllib.parse.urlencode({"query": 'node_uname_info{job="node",host!=""}'})
    series = _get(f"{monitoring_cluster.prometheus}/api/v1/query?{query}")["data"]["result"]
    names = {s["metric"]["host"]: s["metric"]["nodename"].split(".")[0] for s in series}
    assert names == {host: host for host in NODE_TARGETS}


def test_prometheus_and_alertmanager_listen_on_the_planned_address(monitoring_cluster):
    data = _get(f"{monitoring_cluster.prometheus}/api/v1/targets?state=active")["data"]["activeTargets"]
    own = {t["labels"]["job"]: t for t in data if t["labels"]["job"] in ("prometheus", "alertmanager")}
    assert set(own) == {"prometheus", "alertmanager"}
    deadline = time.monotonic() + UP_WITHIN_S
    while any(t["health"] != "up" for t in own.values()):
        assert time.monotonic() < deadline, {j: t["lastError"] for j, t in own.items()}
        time.sleep(2)
        data = _get(f"{monitoring_cluster.prometheus}/api/v1/targets?state=active")["data"]["activeTargets"]
        own = {t["labels"]["job"]: t for t in data if t["labels"]["job"] in own}
    status = _get(f"{monitoring_cluster.alertmanager}/api/v2/status")
    assert status["cluster"]["status"] == "disabled"  # one Alertmanager, no gossip (roles/monitoring)


def test_a_stopped_node_exporter_raises_node_down_for_its_host_and_a_restart_resolves_it(monitoring_cluster):
    host = GPU_SERVERS[0]
    planned = dict(NODE_TARGETS[host].labels)
    _wait_nodes_up(monitoring_cluster.prometheus)
    assert host not in _node_down(monitoring_cluster.alertmanager)
    rc, _, err = monitoring_cluster.sh(host, f"systemctl stop {EXPORTER_UNIT}")
    assert rc == 0, err
    stopped = time.monotonic()
    try:
        while True:
            alerts = _node_down(monitoring_cluster.alertmanager)
            if host in alerts:
                break
            assert time.monotonic() - stopped < FIRE_WITHIN_S, f"no NodeDown for {host} within {FIRE_WITHIN_S:.0f} s"
            time.sleep(2)
        fired_s = time.monotonic() - stopped
        labels = alerts[host]["labels"]
        assert labels["severity"] == "critical" and labels["job"] == "node" and labels["instance"] == host
        assert {k: labels.get(k) for k in planned} == planned  # host, role, rack, su of the plan
        assert host in alerts[host]["annotations"]["summary"]
        assert set(alerts) == {host}, f"only {host}'s exporter stopped, NodeDown fired for {sorted(alerts)}"
        # the lab's NodeDown waits 15 s (less a scrape in flight and the ssh round trip when measured from here):
        # an alert much sooner would not be the rule's `for` at work
        assert fired_s >= 12, f"NodeDown reached Alertmanager {fired_s:.0f} s after the stop"
    finally:
        rc, _, err = monitoring_cluster.sh(host, f"systemctl start {EXPORTER_UNIT}")
    assert rc == 0, err
    started = time.monotonic()
    while host in _node_down(monitoring_cluster.alertmanager):
        assert time.monotonic() - started < RESOLVE_WITHIN_S, f"NodeDown for {host} not resolved"
        time.sleep(2)
    resolved_s = time.monotonic() - started
    print(f"NodeDown for {host}: in Alertmanager {fired_s:.1f} s after the stop, resolved {resolved_s:.1f} s after"
          " the start")
    assert _node_targets(monitoring_cluster.prometheus)[host]["health"] == "up"
