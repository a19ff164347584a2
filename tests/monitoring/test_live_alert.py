"""A real Prometheus and Alertmanager on 127.0.0.1 with the rendered rules and alertmanager.yml: a GPU at 90 C,
served by the lab's SIMULATED dcgm-exporter (roles/dcgm_exporter's script, its state file), reaches Alertmanager's
API as GpuTemperatureCritical naming its host and GPU, and Alertmanager delivers it to the LAB ONLY alert receiver
(roles/monitoring's script), as the lab's Alertmanager does.

The rules are the lab's rendered files with every ``for`` set to zero: the promtool unit tests hold each rule's
timing; this test holds the path from a scraped series to a delivered alert, in seconds.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from monitoring_tools import RECEIVER, SIM_DCGM, free_port, get, sim_dcgm_config, stand_in, stop, tool

HOST = "su01-r01-gpu01"
DEADLINE_S = 60


@pytest.fixture
def exporter(tmp_path: Path) -> Iterator[int]:
    """The simulated exporter for two GPUs, GPU 0 at 90 C (its state file): its port."""
    config, state, port = tmp_path / "sim-config.json", tmp_path / "sim-state.json", free_port()
    config.write_text(json.dumps(sim_dcgm_config(HOST, 2)))
    state.write_text(json.dumps({"0": {"DCGM_FI_DEV_GPU_TEMP": 90}}))
    args = ["--config", str(config), "--state", str(state), "--listen", "127.0.0.1", "--port", str(port)]
    with stand_in(SIM_DCGM, args, port, "/metrics", tmp_path / "sim.log"):
        yield port


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[int]:
    """The lab alert receiver: its port."""
    port = free_port()
    args = ["--listen", "127.0.0.1", "--port", str(port), "--record", str(tmp_path / "notifications.jsonl")]
    with stand_in(RECEIVER, args, port, "/notifications", tmp_path / "receiver.log"):
        yield port


def _start(argv: list[str], log: Path) -> subprocess.Popen:
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _notified(port: int) -> list[dict]:
    """The alerts of the notifications the receiver on ``port`` recorded."""
    return [alert for n in json.loads(get(f"http://127.0.0.1:{port}/notifications")[1])
            for alert in n["payload"]["alerts"]]


def _alerts(port: int) -> list[dict]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/alerts", timeout=2) as answer:
        return json.load(answer)


@pytest.mark.slow
def test_a_hot_gpu_reaches_alertmanager_and_its_receiver(written: Path, exporter: int, receiver: int) -> None:
    prometheus_bin, alertmanager_bin = tool("prometheus"), tool("prometheus-alertmanager")
    for rules in (written / "rules").glob("*.yml"):
        document = yaml.safe_load(rules.read_text())
        for group in document["groups"]:
            group["interval"] = "1s"
            for rule in group["rules"]:
                rule.pop("for", None)
        rules.write_text(yaml.safe_dump(document, sort_keys=False))
    am_port, prom_port = free_port(), free_port()
    rendered = yaml.safe_load((written / "prometheus.yml").read_text())
    dcgm = next(job for job in rendered["scrape_configs"] if job["job_name"] == "dcgm")
    host_target = next(target for target in dcgm["static_configs"] if target["labels"]["host"] == HOST)
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "alerting": {"alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{am_port}"]}]}]},
        "rule_files": rendered["rule_files"],
        # the rendered dcgm job, its target this test's exporter with the host's planned labels
        "scrape_configs": [{**dcgm, "static_configs": [{"targets": [f"127.0.0.1:{exporter}"],
                                                        "labels": host_target["labels"]}]}],
    }
    (written / "live.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    # the rendered alertmanager.yml as the lab installs it (playbooks/monitoring.yml's lab settings): its receiver
    # delivers to the lab alert receiver, a new group a second after its first alert
    routing = yaml.safe_load((written / "alertmanager.yml").read_text())
    routing["route"]["group_wait"] = "1s"
    for entry in routing["receivers"]:
        entry["webhook_configs"] = [{"url": f"http://127.0.0.1:{receiver}/alerts"}]
    (written / "alertmanager.yml").write_text(yaml.safe_dump(routing, sort_keys=False))
    alertmanager = _start([alertmanager_bin, f"--config.file={written / 'alertmanager.yml'}",
                           f"--storage.path={written / 'am-data'}", f"--web.listen-address=127.0.0.1:{am_port}",
                           "--cluster.listen-address="], written / "alertmanager.log")
    prometheus = _start([prometheus_bin, f"--config.file={written / 'live.yml'}",
                         f"--storage.tsdb.path={written / 'prom-data'}", f"--web.listen-address=127.0.0.1:{prom_port}"],
                        written / "prometheus.log")
    try:
        started, delivered = time.monotonic(), []
        while time.monotonic() - started < DEADLINE_S and not delivered:
            for process, name in ((prometheus, "prometheus"), (alertmanager, "alertmanager")):
                assert process.poll() is None, (written / f"{name}.log").read_text()
            with contextlib.suppress(OSError):  # Alertmanager not listening yet
                delivered = [a for a in _alerts(am_port) if a["labels"].get("alertname") == "GpuTemperatureCritical"]
            time.sleep(0.5)
        assert delivered, (f"no GpuTemperatureCritical in Alertmanager within {DEADLINE_S} s\n"
                           + (written / "prometheus.log").read_text()[-3000:])
        labels = delivered[0]["labels"]
        assert (labels["host"], labels["gpu"], labels["severity"], labels["rail"]) == (HOST, "0", "critical", "0")
        assert labels["simulated"] == "true"  # the series said so, and the alert keeps it
        assert delivered[0]["annotations"]["summary"] == f"GPU 0 on {HOST} is at or above 85 C"
        notified: list[dict] = []
        while time.monotonic() - started < DEADLINE_S and not notified:
            notified = [a for a in _notified(receiver) if a["labels"].get("alertname") == "GpuTemperatureCritical"]
            time.sleep(0.5)
        assert notified, f"no GpuTemperatureCritical delivered to the receiver within {DEADLINE_S} s"
        assert {(a["status"], a["labels"]["host"], a["labels"]["gpu"]) for a in notified} == {("firing", HOST, "0")}
    finally:
        stop(prometheus)
        stop(alertmanager)
