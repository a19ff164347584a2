"""What the monitoring tests share: the repository root, the upstream binaries they run and the lab's stand-ins
(the roles' simulated dcgm-exporter and lab alert receiver) run on this machine."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

__all__ = ["RECEIVER", "ROOT", "SIM_DCGM", "free_port", "get", "post_json", "sim_dcgm_config", "stand_in", "tool"]

ROOT = Path(__file__).resolve().parents[2]
SIM_DCGM = ROOT / "roles" / "dcgm_exporter" / "files" / "cf-sim-dcgm-exporter.py"
RECEIVER = ROOT / "roles" / "monitoring" / "files" / "cf-lab-alert-receiver.py"
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def tool(name: str) -> str:
    """An upstream binary the checks need: scripts/setup.sh installs Debian's prometheus and
    prometheus-alertmanager; a check that cannot run fails."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed (scripts/setup.sh installs prometheus and prometheus-alertmanager)")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str) -> tuple[int, bytes]:
    """(status, body) of a GET, errors included."""
    try:
        with _DIRECT.open(url, timeout=5) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def sim_dcgm_config(host: str, gpus: int, model: str = "H200") -> dict:
    """The simulated exporter's configuration as roles/dcgm_exporter/tasks/simulated.yml writes it, from the
    role's defaults."""
    defaults = yaml.safe_load((ROOT / "roles" / "dcgm_exporter" / "defaults" / "main.yml").read_text())
    return {"simulated": True, "gpus": gpus, "model": model, "hostname": host,
            "metrics": defaults["dcgm_exporter_metrics"], "defaults": defaults["dcgm_exporter_simulated_values"]}


@contextmanager
def stand_in(script: Path, args: list[str], port: int, path: str, log: Path) -> Iterator[subprocess.Popen]:
    """One of the roles' stand-in scripts running under this Python, answering ``path`` on 127.0.0.1:port."""
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, str(script), *args], stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, log.read_text()
            try:
                get(f"http://127.0.0.1:{port}{path}")
                break
            except OSError:
                assert time.monotonic() < deadline, f"{script.name} not answering: {log.read_text()}"
                time.sleep(0.1)
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 10 s; reaped either way."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def post_json(url: str, document: object) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(document).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with _DIRECT.open(request, timeout=5) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)
