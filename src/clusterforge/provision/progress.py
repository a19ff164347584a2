"""Per-host task progress from ansible-runner's event stream, as one short line per event that matters.

``TaskProgress`` is an ansible-runner ``event_handler``: it sees every event as the playbook runs
and hands ``emit`` a line when a host finishes a task that changed or failed something, when a host
is unreachable, every ``every`` finished tasks of a host (ok/skipped ones, as a heartbeat), and
the per-host totals at the end. It keeps every event (returns True) for the runner's artifacts.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["TaskProgress"]

RESULTS = {
    "runner_on_ok": "ok", "runner_on_failed": "failed", "runner_on_skipped": "skipped",
    "runner_on_unreachable": "unreachable", "runner_on_async_failed": "failed",
}  # fmt: skip
LOUD = ("changed", "failed", "unreachable")


class TaskProgress:
    def __init__(self, emit: Callable[[str], Any], every: int = 10) -> None:
        self.emit = emit
        self.every = every
        self.started = time.monotonic()
        self.tasks = 0
        self.done: Counter[str] = Counter()
        self.counts: dict[str, Counter[str]] = {}

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self.started:5.0f}s"

    def __call__(self, event: Mapping[str, Any]) -> bool:
        kind = event.get("event", "")
        data = event.get("event_data") or {}
        if kind == "playbook_on_task_start":
            self.tasks += 1
        elif kind == "playbook_on_play_start":
            self.emit(f"{self._elapsed()} play: {data.get('play', '?')}")
        elif RESULTS.get(kind) and data.get("host"):
            host = str(data["host"])
            result = RESULTS[kind]
            if result == "ok" and (data.get("res") or {}).get("changed"):
                result = "changed"
            if kind == "runner_on_failed" and data.get("ignore_errors"):
                result = "ok"
            self.done[host] += 1
            self.counts.setdefault(host, Counter())[result] += 1
            if result in LOUD or self.done[host] % self.every == 0:
                self.emit(f"{self._elapsed()} {host}: {result:<11} task {self.done[host]:>3}"
                          f" {data.get('role', '')}{' : ' if data.get('role') else ''}{data.get('task', '?')}")
        elif kind == "playbook_on_stats":
            for host in sorted(self.counts):
                c = self.counts[host]
                self.emit(f"{self._elapsed()} {host}: done, {self.done[host]} tasks (ok={c['ok']}"
                          f" changed={c['changed']} failed={c['failed']} skipped={c['skipped']}"
                          f" unreachable={c['unreachable']})")
        return True
