"""health's firing alerts read from an Alertmanager (clusterforge.health.alertmanager, gather.alert_findings):
against a real HTTP server on this machine answering GET /api/v2/alerts, never through a proxy, within a bounded
timeout; an Alertmanager that cannot be read makes every node UNKNOWN and says why (never a silent PASS); the
declaration's Alertmanager is the default, `--alertmanager` names another or none, `--alerts FILE` stays for offline
use and the loop's units read the live one."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, ROOT, run_cli, workdir

from clusterforge.health.alertmanager import AlertsUnavailable, alertmanager_url, fetch_alerts, planned_url
from clusterforge.health.evidence import Status
from clusterforge.health.gather import Reach, alert_findings, gather
from clusterforge.health.ladder import Verdict
from clusterforge.loading import load_and_plan
from clusterforge.targets import LAB, SSH

PLAN = load_and_plan(ROOT / "inventory" / "lab.yaml")[1]
HOT, COOL = "su01-r01-gpu01", "su01-r01-gpu02"
# the shape of what the lab's Alertmanager holds for a hot simulated GPU (tests/lab_cluster/test_monitoring_live.py)
FIRING = [{"labels": {"alertname": "GpuTemperatureCritical", "host": HOT, "gpu": "7", "job": "dcgm",
                      "instance": f"{HOT}:9400", "severity": "critical", "simulated": "true"},
           "annotations": {"summary": f"GPU 7 on {HOT} is at or above 85 C"},
           "status": {"state": "active", "silencedBy": [], "inhibitedBy": []},
           "endsAt": "2026-12-07T06:00:00.000Z", "fingerprint": "1"},
          {"labels": {"alertname": "NodeDown", "host": COOL, "severity": "critical"},
           "annotations": {}, "status": {"state": "suppressed", "silencedBy": ["s1"], "inhibitedBy": []}}]


class _Handler(BaseHTTPRequestHandler):
    answer: tuple[int, bytes] = (200, b"[]")
    delay_s = 0.0
    paths: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 -- http.server's name
        type(self).paths.append(self.path)
        time.sleep(type(self).delay_s)
        code, body = type(self).answer
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (the timeout test): nothing to say
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def alertmanager() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {"paths": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)  # server_close joins its request threads
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_firing_alerts_are_read_from_the_alertmanager_and_name_their_host(alertmanager, monkeypatch):
    url, handler = alertmanager
    handler.answer = (200, json.dumps(FIRING).encode())
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{_closed_port()}")  # a proxy would fail: none is used
    monkeypatch.setenv("no_proxy", "")
    found = alert_findings(Reach(PLAN, LAB, alertmanager=url), [HOT, COOL])
    assert handler.paths == ["/api/v2/alerts"]
    hot = {e.check: e for e in found[HOT]}
    assert hot["alert:GpuTemperatureCritical"].status is Status.fail
    assert hot["alert:GpuTemperatureCritical"].summary == (f"GpuTemperatureCritical firing: GPU 7 on {HOT} is at or"
                                                           " above 85 C (SIMULATED: the alert's series are simulated)")
    assert hot["alert:GpuTemperatureCritical"].simulated
    assert hot["alert:alertmanager"].status is Status.ok and "1 firing alert(s)" in hot["alert:alertmanager"].summary
    # the silenced NodeDown is the operator's: not counted
    assert [(e.check, e.status) for e in found[COOL]] == [("alert:alertmanager", Status.ok)]


@pytest.mark.parametrize(("answer", "why"), [
    ((500, b"boom"), "HTTP 500"),
    ((200, b'{"alerts": []}'), "expected the JSON list of alerts"),
    ((200, b"<html>"), "not JSON"),
    ((200, b'[{"labels": "x"}]'), "alert [0]: expected an object"),
])
def test_an_alertmanager_that_answers_wrong_makes_every_node_unknown(alertmanager, answer, why):
    url, handler = alertmanager
    handler.answer = answer
    found = alert_findings(Reach(PLAN, LAB, alertmanager=url), [HOT, COOL])
    for node in (HOT, COOL):
        (evidence,) = found[node]
        assert (evidence.check, evidence.status) == ("alert:alertmanager", Status.unknown)
        assert evidence.summary.startswith("the firing alerts could not be read from Alertmanager") and why in \
            evidence.summary, evidence.summary


def test_no_answer_is_unknown_within_the_timeout_and_gather_never_passes_it(alertmanager, tmp_path):
    url, handler = alertmanager
    handler.delay_s = 1.5
    started = time.monotonic()
    with pytest.raises(AlertsUnavailable, match="timed out"):
        fetch_alerts(url, timeout_s=0.5)
    assert time.monotonic() - started < 1.4
    # nothing listens: through gather (real hosts, their ssh config missing, so no SSH is tried), every node
    # UNKNOWN, and said
    lines: list[str] = []
    closed = f"http://127.0.0.1:{_closed_port()}"
    reach = Reach(PLAN, SSH, ssh_config=tmp_path / "absent", alertmanager=closed)
    for node in gather(reach, [HOT, COOL], say=lines.append):
        assert node.verdict is Verdict.UNKNOWN
        assert any(e.check == "alert:alertmanager" and e.status is Status.unknown and closed in e.summary
                   for e in node.evidence), node.evidence
    assert any(line.startswith("health: the firing alerts could not be read") for line in lines), lines
    # and a firing critical alert still makes its node CRITICAL through gather
    handler.delay_s = 0.0
    handler.answer = (200, json.dumps(FIRING).encode())
    by_name = {n.name: n for n in gather(Reach(PLAN, SSH, ssh_config=tmp_path / "absent", alertmanager=url))}
    assert by_name[HOT].verdict is Verdict.CRITICAL and by_name[COOL].verdict is Verdict.UNKNOWN
    # a lab that is not up (no ssh config) runs no Alertmanager: not asked, its nodes UNKNOWN by the ssh config
    handler.paths.clear()
    lab_down = gather(Reach(PLAN, LAB, ssh_config=tmp_path / "absent", alertmanager=url), [HOT])
    assert handler.paths == [] and [e.check for e in lab_down[0].evidence] == ["ssh:config"]


def test_the_declarations_alertmanager_is_its_monitoring_hosts_address():
    assert PLAN.monitoring is not None
    assert planned_url(PLAN) == f"http://{PLAN.monitoring.address}:{PLAN.monitoring.alertmanager_port}"
    assert alertmanager_url("https://am.example:9093/") == "https://am.example:9093"
    for bad, why in (("ftp://am:9093", "http"), ("http://", "no host"), ("http://u:p@am:9093", "credentials"),
                     ("http://am:9093/?x=1", "query"), ("http://am:99999", "(?i)port out of range"),
                     ("http://am :1", "space")):
        with pytest.raises(ValueError, match=why):
            alertmanager_url(bad)


def test_the_cli_picks_one_source_of_alerts_and_the_loop_reads_the_live_one(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(tmp_path / "no-lab"))
    monkeypatch.setenv("CLUSTERFORGE_STATE_DIR", str(tmp_path / "state"))
    declaration = workdir(tmp_path) / "lab.yaml"
    declaration.write_text(LAB_TEXT)
    alerts = tmp_path / "alerts.json"
    alerts.write_text("[]")
    both = run_cli(capsys, "health", str(declaration), "--alerts", str(alerts), "--alertmanager", "none")
    assert both.code == 2 and "give one source of firing alerts" in both.err, both.err
    bad = run_cli(capsys, "health", str(declaration), "--alertmanager", "http://u:p@am:9093")
    assert bad.code == 2 and "--alertmanager: credentials" in bad.err, bad.err
    looped = run_cli(capsys, "remediate", str(declaration), "--stack", "lab", "--write-units",
                     str(tmp_path / "u0"), "--alerts", str(alerts))
    assert looped.code == 2 and "a file is for one run offline" in looped.err, looped.err
    for extra, carried in (((), None), (("--alertmanager", "none"), "none"),
                           (("--alertmanager", "http://198.18.0.9:9093"), "http://198.18.0.9:9093")):
        units = tmp_path / f"u{len(extra)}{carried or ''}".replace("/", "_").replace(":", "_")
        wrote = run_cli(capsys, "remediate", str(declaration), "--stack", "lab", "--write-units", str(units), *extra)
        assert wrote.code == 0, wrote.err[-2000:]
        start = next(line for line in (units / "clusterforge-remediate-lab.service").read_text().splitlines()
                     if line.startswith("ExecStart="))
        # without --alertmanager the loop reads the declaration's at every run (no file, no fixed address)
        assert ("--alertmanager" in start) is (carried is not None) and "--alerts " not in start, start
        if carried:
            assert start.endswith(f"--alertmanager {carried}"), start


def test_the_declarations_alertmanager_is_read_unless_none_or_a_file_is_named(tmp_path, monkeypatch):
    import dataclasses

    from clusterforge.cli._common import HostTarget
    from clusterforge.cli.health import health_reach

    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(tmp_path / "no-lab"))
    declaration = workdir(tmp_path) / "lab.yaml"
    declaration.write_text(LAB_TEXT)
    _, reach = health_reach(declaration, HostTarget.lab, None, None, True)
    assert reach.alertmanager == planned_url(PLAN)
    _, none = health_reach(declaration, HostTarget.lab, None, None, True, "none")
    assert none.alertmanager is None
    _, from_file = health_reach(declaration, HostTarget.lab, None, None, True, None, Path("alerts.json"))
    assert from_file.alertmanager is None
    # a cluster without a control node plans no monitoring: no Alertmanager to read
    assert planned_url(dataclasses.replace(PLAN, monitoring=None)) is None
