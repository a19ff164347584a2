"""The lab's stand-ins run on this machine: the SIMULATED dcgm-exporter (roles/dcgm_exporter, the lab's GPU series)
and the LAB ONLY alert receiver (roles/monitoring, the webhook the lab's Alertmanager delivers to).

The simulator serves every field of the role's metrics list (so every DCGM field the rules read) for each GPU,
each series labelled simulated="true" and each HELP text saying SIMULATED; its state file sets one GPU's value;
its healthy defaults keep every GPU rule silent and a GPU set to 90 C fires GpuTemperatureCritical for that GPU
only (promtool test rules over the series it served). The receiver records what is posted to it with the time it
arrived and serves it back."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from monitoring_tools import RECEIVER, SIM_DCGM, free_port, get, post_json, sim_dcgm_config, stand_in, tool

HOST = "su01-r01-gpu01"
SAMPLE = re.compile(r"^(\w+)\{(.*)\} (\S+)$")


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The simulated exporter for two GPUs on a free port: (its /metrics URL, its state file)."""
    config, state, port = tmp_path / "config.json", tmp_path / "state.json", free_port()
    config.write_text(json.dumps(sim_dcgm_config(HOST, 2)))
    args = ["--config", str(config), "--state", str(state), "--listen", "127.0.0.1", "--port", str(port)]
    with stand_in(SIM_DCGM, args, port, "/metrics", tmp_path / "sim.log"):
        yield f"http://127.0.0.1:{port}/metrics", state


def _scrape(url: str) -> tuple[str, list[tuple[str, dict[str, str], float]]]:
    status, body = get(url)
    assert status == 200, body
    text = body.decode()
    samples = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name, labels, value = SAMPLE.match(line).groups()  # type: ignore[union-attr]
        samples.append((name, dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', labels)), float(value)))
    return text, samples


def _gpu_rules(lab_monitoring: dict[str, str]) -> list[dict]:
    return [rule for group in yaml.safe_load(lab_monitoring["rules/gpu.yml"])["groups"] for rule in group["rules"]]


def test_every_series_says_it_is_simulated_and_every_field_the_rules_read_is_served(sim, lab_monitoring) -> None:
    url, _ = sim
    text, samples = _scrape(url)
    fields = [m["field"] for m in sim_dcgm_config(HOST, 2)["metrics"]]
    helps = re.findall(r"^# HELP (\w+) (.*)$", text, re.MULTILINE)
    assert [name for name, _ in helps] == fields
    assert all(help_text.startswith("SIMULATED") for _, help_text in helps), helps
    assert {(name, labels["gpu"]) for name, labels, _ in samples} == {(f, g) for f in fields for g in ("0", "1")}
    assert all(labels["simulated"] == "true" and labels["Hostname"] == HOST and labels["modelName"] == "H200"
               for _, labels, _ in samples)
    read = {name for rule in _gpu_rules(lab_monitoring) for name in re.findall(r"DCGM_FI_\w+", rule["expr"])}
    assert read and read <= set(fields)
    # the exposition parses; promtool's linter says only what it says of dcgm-exporter's own series (counters
    # without _total, DCGM's PCIE_REPLAY_COUNTER name, the camelCase labels UUID, modelName, Hostname)
    checked = subprocess.run([tool("promtool"), "check", "metrics"], input=text, capture_output=True, text=True,
                             timeout=60)
    style = ('counter metrics should have "_total" suffix', "label names should be written in 'snake_case'",
             "DCGM_FI_DEV_PCIE_REPLAY_COUNTER metric name should not include type 'counter'")
    problems = [line for line in (checked.stdout + checked.stderr).splitlines()
                if line.strip() and not any(s in line for s in style)]
    assert not problems, problems


def test_the_state_file_sets_one_gpus_value_and_a_broken_one_fails_the_scrape(sim) -> None:
    url, state = sim
    state.write_text(json.dumps({"1": {"DCGM_FI_DEV_GPU_TEMP": 90}}))
    _, samples = _scrape(url)
    temps = {labels["gpu"]: value for name, labels, value in samples if name == "DCGM_FI_DEV_GPU_TEMP"}
    assert temps == {"0": 35.0, "1": 90.0}
    for broken in ("{", json.dumps({"7": {"DCGM_FI_DEV_GPU_TEMP": 90}}), json.dumps({"0": {"NOT_A_FIELD": 1}})):
        state.write_text(broken)
        status, body = get(url)
        assert status == 500 and b"SIMULATED" in body, (broken, body)
    state.unlink()
    assert {v for n, _, v in _scrape(url)[1] if n == "DCGM_FI_DEV_GPU_TEMP"} == {35.0}


def _promtool_case(samples, alerts: list[dict], expected: dict[str, list[dict]]) -> dict:
    """A promtool test of the served samples held for an hour, as the lab's dcgm job labels them."""
    series = [{"series": name + "{" + ",".join(f'{k}="{v}"' for k, v in {
        **labels, "job": "dcgm", "host": HOST, "instance": HOST}.items()) + "}", "values": f"{value:g}x60"}
        for name, labels, value in samples]
    return {"interval": "1m", "input_series": series, "alert_rule_test": [
        {"eval_time": "60m", "alertname": rule["alert"], "exp_alerts": expected.get(rule["alert"], [])}
        for rule in alerts]}


def test_healthy_simulated_gpus_fire_nothing_and_a_hot_one_fires_for_itself_only(sim, lab_monitoring,
                                                                                 tmp_path: Path) -> None:
    url, state = sim
    rules = _gpu_rules(lab_monitoring)
    healthy = _promtool_case(_scrape(url)[1], rules, {})
    state.write_text(json.dumps({"1": {"DCGM_FI_DEV_GPU_TEMP": 90}}))
    hot_samples = _scrape(url)[1]
    (gpu1,) = [labels for name, labels, _ in hot_samples if name == "DCGM_FI_DEV_GPU_TEMP" and labels["gpu"] == "1"]
    labels = {**gpu1, "job": "dcgm", "host": HOST, "instance": HOST}
    fired = {"GpuTemperatureWarning": [{"exp_labels": {**labels, "severity": "warning"}, "exp_annotations": {
                 "summary": f"GPU 1 on {HOST} is at or above 80 C"}}],
             "GpuTemperatureCritical": [{"exp_labels": {**labels, "severity": "critical"}, "exp_annotations": {
                 "summary": f"GPU 1 on {HOST} is at or above 85 C"}}]}
    hot = _promtool_case(hot_samples, rules, fired)
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "gpu.yml").write_text(lab_monitoring["rules/gpu.yml"])
    unit = tmp_path / "sim.test.yml"
    unit.write_text(yaml.safe_dump({"rule_files": ["rules/gpu.yml"], "evaluation_interval": "1m",
                                    "tests": [healthy, hot]}, sort_keys=False))
    done = subprocess.run([tool("promtool"), "test", "rules", str(unit)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "SUCCESS" in done.stdout, done.stdout + done.stderr


def test_the_lab_receiver_records_what_is_posted_with_its_arrival_time(tmp_path: Path) -> None:
    port, record = free_port(), tmp_path / "notifications.jsonl"
    args = ["--listen", "127.0.0.1", "--port", str(port), "--record", str(record)]
    with stand_in(RECEIVER, args, port, "/notifications", tmp_path / "receiver.log"):
        base = f"http://127.0.0.1:{port}"
        before = time.time()
        payload = {"status": "firing", "alerts": [{"status": "firing", "labels": {"alertname": "NodeDown",
                                                                                  "host": HOST}}]}
        assert post_json(f"{base}/alerts", payload) == (200, {"recorded": 1})
        status, body = get(f"{base}/notifications?since={before}")
        (notification,) = json.loads(body)
        assert status == 200 and notification["payload"] == payload and notification["path"] == "/alerts"
        assert before <= notification["received"] <= time.time()
        assert json.loads(get(f"{base}/notifications?since={time.time() + 1}")[1]) == []
        assert get(f"{base}/elsewhere")[0] == 404
        assert get(f"{base}/notifications?since=yesterday")[0] == 400
    assert [json.loads(line)["payload"] for line in record.read_text().splitlines()] == [payload]
    assert "NodeDown host=" + HOST in (tmp_path / "receiver.log").read_text()
