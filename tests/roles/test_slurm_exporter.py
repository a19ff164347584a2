"""roles/slurm_controller's cf-slurm-exporter run as a process and scraped over HTTP, with stand-in squeue, sinfo and
sacct (shell scripts printing what Slurm prints for those formats; the lab runs it against real Slurm:
tests/lab_cluster/test_monitoring_live.py). A job is counted once in its account's wait and run histograms however
many readings report it; node states fold into down, drain, idle, alloc, mix; a failing command marks the
exporter down and keeps the last reading."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

EXPORTER = Path(__file__).resolve().parents[2] / "roles" / "slurm_controller" / "files" / "cf-slurm-exporter.py"
_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _stand_in(bin_dir: Path, name: str, data: Path) -> None:
    script = bin_dir / name
    script.write_text(f"#!/bin/sh\n[ -e {data}.fail ] && {{ echo broken >&2; exit 1; }}\ncat {data}\n")
    script.chmod(0o755)


def _metrics(url: str) -> dict[str, float]:
    with _HTTP.open(url, timeout=5) as response:
        lines = response.read().decode().splitlines()
    return {k: float(v) for k, v in (line.rsplit(" ", 1) for line in lines if line and not line.startswith("#"))}


def _until(url: str, test, timeout_s: float = 20.0) -> dict[str, float]:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            values = _metrics(url)
            if test(values):
                return values
        except OSError:
            values = {}
        assert time.monotonic() < deadline, values
        time.sleep(0.3)


@pytest.fixture
def exporter(tmp_path: Path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    data = {name: tmp_path / f"{name}.out" for name in ("squeue", "sinfo", "sacct")}
    for name, path in data.items():
        path.write_text("")
        _stand_in(bin_dir, name, path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(EXPORTER), f"--listen=127.0.0.1:{port}", "--interval=1",
                             f"--slurm-bin={bin_dir}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield f"http://127.0.0.1:{port}/metrics", data
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_queue_nodes_and_each_account_s_wait_and_run_times_counted_once(exporter) -> None:
    url, data = exporter
    now = int(time.time())
    data["squeue"].write_text("research|PENDING\nresearch|RUNNING\ninference|PENDING\nresearch|PENDING\n")
    data["sinfo"].write_text("gpu01|idle\ngpu01|idle\ngpu02|down*\ngpu03|drained\ngpu04|mixed\ngpu05|allocated\n")
    data["sacct"].write_text(
        f"1|research|{now - 100}|{now - 40}|{now - 10}|COMPLETED\n"  # waited 60 s, ran 30 s
        f"2|inference|{now - 20}|{now - 18}|Unknown|RUNNING\n"  # waited 2 s, still running
        f"3|research|{now - 5}|Unknown|Unknown|PENDING\n")  # not started: no wait yet
    values = _until(url, lambda v: v.get("slurm_exporter_up") == 1 and "slurm_queue_pending" in v)
    assert (values["slurm_queue_pending"], values["slurm_queue_running"]) == (3, 1)
    assert values['slurm_account_jobs{account="research",state="pending"}'] == 2
    assert {s: values[f"slurm_nodes_{s}"] for s in ("idle", "down", "drain", "mix", "alloc")} == {
        "idle": 1, "down": 1, "drain": 1, "mix": 1, "alloc": 1}
    assert values['slurm_job_wait_seconds_count{account="research"}'] == 1
    assert values['slurm_job_wait_seconds_sum{account="research"}'] == 60
    assert values['slurm_job_wait_seconds_bucket{account="research",le="60"}'] == 1
    assert values['slurm_job_wait_seconds_bucket{account="research",le="30"}'] == 0
    assert values['slurm_job_wait_seconds_count{account="inference"}'] == 1
    assert values['slurm_job_run_seconds_count{account="research"}'] == 1
    assert 'slurm_job_run_seconds_count{account="inference"}' not in values
    # later readings report the same jobs again, job 2 now ended: each is counted once
    data["sacct"].write_text(data["sacct"].read_text().replace(f"{now - 18}|Unknown|RUNNING",
                                                               f"{now - 18}|{now}|COMPLETED"))
    values = _until(url, lambda v: v.get('slurm_job_run_seconds_count{account="inference"}') == 1)
    time.sleep(1.5)  # another reading
    values = _metrics(url)
    assert values['slurm_job_wait_seconds_count{account="research"}'] == 1
    assert values['slurm_job_wait_seconds_count{account="inference"}'] == 1
    assert values['slurm_job_run_seconds_count{account="research"}'] == 1
    # Slurm not answering: the exporter says so and keeps the last reading
    Path(f"{data['sinfo']}.fail").touch()
    values = _until(url, lambda v: v.get("slurm_exporter_up") == 0)
    assert values["slurm_exporter_read_errors_total"] >= 1 and values["slurm_queue_pending"] == 3
