"""Aggregate callback: wall time per role and per host, printed when the playbook ends.

ansible-core ships no timing callback (profile_tasks/profile_roles live in the
ansible.posix collection), and the project depends on ansible-core only.
"""

from __future__ import annotations

import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: clusterforge_timing
    type: aggregate
    short_description: time spent per role and per host
    description:
      - Prints the wall-clock time each role took (summed over its tasks) and each host's
        busy time when the playbook ends.
    requirements:
      - enable in ansible.cfg (callbacks_enabled = clusterforge_timing)
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "clusterforge_timing"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self) -> None:
        super().__init__()
        self._playbook_started = time.monotonic()
        self._task_started: float | None = None
        self._task_role = ""
        self._role_seconds: dict[str, float] = {}
        self._host_seconds: dict[str, float] = {}
        self._host_task_started: dict[str, float] = {}

    def _close_task(self) -> None:
        if self._task_started is not None:
            elapsed = time.monotonic() - self._task_started
            self._role_seconds[self._task_role] = self._role_seconds.get(self._task_role, 0.0) + elapsed
        self._task_started = None

    def v2_playbook_on_task_start(self, task, is_conditional) -> None:
        self._close_task()
        self._task_started = time.monotonic()
        role = getattr(task, "_role", None)
        self._task_role = role.get_name(include_role_fqcn=False) if role else "(playbook)"

    def v2_playbook_on_handler_task_start(self, task) -> None:
        self.v2_playbook_on_task_start(task, False)

    def v2_runner_on_start(self, host, task) -> None:
        self._host_task_started[host.get_name()] = time.monotonic()

    def _host_done(self, result, *args, **kwargs) -> None:
        name = result._host.get_name()
        started = self._host_task_started.pop(name, None)
        if started is not None:
            self._host_seconds[name] = self._host_seconds.get(name, 0.0) + time.monotonic() - started

    v2_runner_on_ok = _host_done
    v2_runner_on_failed = _host_done
    v2_runner_on_skipped = _host_done
    v2_runner_on_unreachable = _host_done

    def v2_playbook_on_stats(self, stats) -> None:
        self._close_task()
        total = time.monotonic() - self._playbook_started
        self._display.banner("CLUSTERFORGE TIMING")
        for role, seconds in sorted(self._role_seconds.items(), key=lambda kv: -kv[1]):
            self._display.display(f"role {role:<28} {seconds:8.1f} s")
        for host, seconds in sorted(self._host_seconds.items()):
            self._display.display(f"host {host:<28} {seconds:8.1f} s")
        self._display.display(f"total {'':<27} {total:8.1f} s")
