"""A real Prometheus and Alertmanager on 127.0.0.1 with the rendered rules and alertmanager.yml: a GPU at 90 C,
served by a small exporter in this process, reaches Alertmanager's API as GpuTemperatureCritical naming its
host.

The rules are the lab's rendered files with every ``for`` set to zero: the promtool unit tests hold each rule's
timing; this test holds the path from a scraped series to a delivered alert, in seconds.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from monitoring_tools import tool

HOST = "su01-r01-gpu01"
DEADLINE_S = 60


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _GpuExporter(BaseHTTPRequestHandler):
    body = b'# TYPE DCGM_FI_DEV_GPU_TEMP gauge\nDCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-test"} 90\n'

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def exporter() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _GpuExporter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _start(argv: list[str], log: Path) -> subprocess.Popen:
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _alerts(port: int) -> list[dict]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/alerts", timeout=2) as answer:
        return json.load(answer)


@pytest.mark.slow
def test_a_hot_gpu_reaches_alertmanager(written: Path, exporter: int) -> None:
    prometheus_bin, alertmanager_bin = tool("prometheus"), tool("prometheus-alertmanager")
    for rules in (written / "rules").glob("*.yml"):
        document = yaml.safe_load(rules.read_text())
        for group in document["groups"]:
            group["interval"] = "1s"
            for rule in group["rules"]:
                rule.pop("for", None)
        rules.write_text(yaml.safe_dump(document, sort_keys=False))
    am_port, prom_port = _free_port(), _free_port()
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
        assert delivered[0]["annotations"]["summary"] == f"GPU 0 on {HOST} is at or above 85 C"
    finally:
        _stop(prometheus)
        _stop(alertmanager)
