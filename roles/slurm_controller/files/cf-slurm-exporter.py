#!/usr/bin/python3
"""cf-slurm-exporter: Slurm's queue, nodes and per-account job wait and run times for Prometheus, read from
Slurm's own commands on the controller (squeue, sinfo, and sacct from the accounting database). clusterforge's
stand-in for prometheus-slurm-exporter, which it cannot install (no Debian package); Python's standard library
only. It reads Slurm every --interval seconds in a thread and serves the last reading on GET /metrics.

Series (every metric's HELP says where it comes from):
  slurm_queue_pending, slurm_queue_running           jobs pending and running (squeue)
  slurm_account_jobs{account,state}                  the same per account (state: pending, running)
  slurm_nodes_<state>                                nodes per state: alloc, mix, idle, down, drain, other (sinfo)
  slurm_job_wait_seconds{account}                    histogram: submit to start of each job that started (sacct)
  slurm_job_run_seconds{account}                     histogram: start to end of each job that ended (sacct)
  slurm_exporter_last_read_timestamp_seconds, slurm_exporter_read_errors_total, slurm_exporter_up
The histograms count each job once, from the jobs sacct reports since the exporter started (less --lookback):
counters restart with the exporter, as any Prometheus counter may.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WAIT_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400)
RUN_BUCKETS = (10, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400, 259200, 604800)
NODE_STATES = ("alloc", "mix", "idle", "down", "drain", "other")
OVERLAP_S = 600  # each sacct read reaches back this far past the previous one (jobs seen are not counted twice)
FOREVER = 2**62
SOURCE = "cf-slurm-exporter, from Slurm's own"


def _run(argv: list[str], timeout_s: float) -> list[str]:
    env = {**os.environ, "SLURM_TIME_FORMAT": "%s"}  # sacct's times as Unix seconds
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {proc.stderr.strip()[:200]}")
    return [line for line in proc.stdout.splitlines() if line.strip()]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _node_state(state: str) -> str:
    state = state.lower().rstrip("*~#!%$@^-+")
    if state.startswith(("drain", "drng")):
        return "drain"
    if state.startswith(("down", "fail", "not_responding")):
        return "down"
    for known in ("alloc", "mix", "idle"):
        if state.startswith(known):
            return known
    return "other"


class Histogram:
    def __init__(self, buckets: tuple[int, ...]) -> None:
        self.buckets = buckets
        self.counts: dict[str, list[int]] = {}
        self.sums: dict[str, float] = {}

    def observe(self, account: str, value: float) -> None:
        counts = self.counts.setdefault(account, [0] * (len(self.buckets) + 1))
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                counts[i] += 1
        counts[-1] += 1
        self.sums[account] = self.sums.get(account, 0.0) + value

    def lines(self, name: str) -> list[str]:
        out = []
        for account in sorted(self.counts):
            counts, label = self.counts[account], f'account="{_escape(account)}"'
            out += [f'{name}_bucket{{{label},le="{b}"}} {c}' for b, c in zip(self.buckets, counts, strict=False)]
            out += [f'{name}_bucket{{{label},le="+Inf"}} {counts[-1]}', f"{name}_sum{{{label}}} {self.sums[account]}",
                    f"{name}_count{{{label}}} {counts[-1]}"]
        return out


class Reader:
    """Slurm read every interval; the last reading rendered in Prometheus's text format."""

    def __init__(self, bin_dir: str, lookback_s: int, timeout_s: float) -> None:
        self.bin = bin_dir
        self.timeout_s = timeout_s
        self.since = int(time.time()) - lookback_s
        self.waited: dict[str, int] = {}  # job id -> its end (FOREVER while it runs): its wait is counted
        self.ran: dict[str, int] = {}  # job id -> its end: its run time is counted
        self.wait = Histogram(WAIT_BUCKETS)
        self.run = Histogram(RUN_BUCKETS)
        self.gauges: list[str] = []
        self.errors = 0
        self.last_ok = 0.0
        self.up = 0
        self.lock = threading.Lock()

    def _cmd(self, name: str, *args: str) -> list[str]:
        return _run([os.path.join(self.bin, name), *args], self.timeout_s)

    def _queue(self) -> list[str]:
        per: dict[tuple[str, str], int] = {}
        for line in self._cmd("squeue", "--noheader", "--all", "--array", "--states=PENDING,RUNNING",
                              "--format=%a|%T"):
            account, _, state = line.partition("|")
            key = (account.strip(), state.strip().lower())
            per[key] = per.get(key, 0) + 1
        pending = sum(n for (_, s), n in per.items() if s == "pending")
        running = sum(n for (_, s), n in per.items() if s == "running")
        out = [f"# HELP slurm_queue_pending Jobs pending ({SOURCE} squeue).", "# TYPE slurm_queue_pending gauge",
               f"slurm_queue_pending {pending}",
               f"# HELP slurm_queue_running Jobs running ({SOURCE} squeue).", "# TYPE slurm_queue_running gauge",
               f"slurm_queue_running {running}",
               f"# HELP slurm_account_jobs Jobs per account and state ({SOURCE} squeue).",
               "# TYPE slurm_account_jobs gauge"]
        out += [f'slurm_account_jobs{{account="{_escape(a)}",state="{s}"}} {n}' for (a, s), n in sorted(per.items())]
        return out

    def _nodes(self) -> list[str]:
        states: dict[str, str] = {}
        for line in self._cmd("sinfo", "--noheader", "--Node", "--format=%N|%T"):
            node, _, state = line.partition("|")
            states[node.strip()] = _node_state(state.strip())  # a node in several partitions: one state
        out = []
        for state in NODE_STATES:
            count = sum(s == state for s in states.values())
            out += [f"# HELP slurm_nodes_{state} Nodes in state {state} ({SOURCE} sinfo).",
                    f"# TYPE slurm_nodes_{state} gauge", f"slurm_nodes_{state} {count}"]
        return out

    def _accounting(self, now: int) -> None:
        lines = self._cmd("sacct", "--allusers", "--allocations", "--noheader", "--parsable2",
                          f"--starttime={time.strftime('%Y-%m-%dT%H:%M:%S', time.localtime(self.since))}",
                          "--endtime=now", "--format=JobIDRaw,Account,Submit,Start,End,State")
        for line in lines:
            fields = line.split("|")
            if len(fields) < 6:
                continue
            job, account, submit, start, end, state = fields[:6]
            if state.startswith("PENDING") or not (submit.isdigit() and start.isdigit()):
                continue  # not started (a pending job's Start may be an estimate)
            ended = end.isdigit() and not state.startswith("RUNNING")
            if job not in self.waited:
                self.wait.observe(account, max(int(start) - int(submit), 0))
            # kept until sacct can no longer report it: a running job, in every window
            self.waited[job] = int(end) if ended else FOREVER
            if ended and job not in self.ran:
                self.ran[job] = int(end)
                self.run.observe(account, max(int(end) - int(start), 0))
        self.since = now - OVERLAP_S
        # a job that ended before the next window is never reported again: forget it
        self.waited = {j: t for j, t in self.waited.items() if t >= self.since}
        self.ran = {j: t for j, t in self.ran.items() if t >= self.since}

    def read(self) -> None:
        now = int(time.time())
        try:
            gauges = self._queue() + self._nodes()
            self._accounting(now)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            with self.lock:
                self.errors += 1
                self.up = 0
            print(f"cf-slurm-exporter: reading Slurm failed: {exc}", flush=True)
            return
        with self.lock:
            self.gauges, self.last_ok, self.up = gauges, time.time(), 1

    def text(self) -> str:
        with self.lock:
            out = list(self.gauges)
            out += [f"# HELP slurm_job_wait_seconds Submit to start of each job that started, per account ({SOURCE}"
                    " sacct).", "# TYPE slurm_job_wait_seconds histogram", *self.wait.lines("slurm_job_wait_seconds"),
                    f"# HELP slurm_job_run_seconds Start to end of each job that ended, per account ({SOURCE} sacct).",
                    "# TYPE slurm_job_run_seconds histogram", *self.run.lines("slurm_job_run_seconds"),
                    "# HELP slurm_exporter_up 1 when the last reading of Slurm succeeded.",
                    "# TYPE slurm_exporter_up gauge", f"slurm_exporter_up {self.up}",
                    "# HELP slurm_exporter_last_read_timestamp_seconds When Slurm was last read in full.",
                    "# TYPE slurm_exporter_last_read_timestamp_seconds gauge",
                    f"slurm_exporter_last_read_timestamp_seconds {self.last_ok}",
                    "# HELP slurm_exporter_read_errors_total Readings of Slurm that failed.",
                    "# TYPE slurm_exporter_read_errors_total counter",
                    f"slurm_exporter_read_errors_total {self.errors}"]
        return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", required=True, help="address:port")
    parser.add_argument("--interval", type=float, default=15.0, help="seconds between readings of Slurm")
    parser.add_argument("--lookback", type=int, default=0, help="seconds of accounting before the start to count")
    parser.add_argument("--slurm-bin", default="/usr/bin")
    args = parser.parse_args()
    reader = Reader(args.slurm_bin, args.lookback, timeout_s=max(args.interval, 10.0))

    def loop() -> None:
        while True:
            started = time.monotonic()
            reader.read()
            time.sleep(max(args.interval - (time.monotonic() - started), 1.0))

    threading.Thread(target=loop, daemon=True).start()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            body = reader.text().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
            pass

    host, _, port = args.listen.rpartition(":")
    ThreadingHTTPServer((host.strip("[]"), int(port)), Handler).serve_forever()


if __name__ == "__main__":
    main()
