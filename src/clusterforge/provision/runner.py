"""Drive playbooks/site.yml with ansible-runner and report the outcome per host.

ansible-runner is what AWX / Ansible Automation Platform execute playbooks with, so the
same project directory, inventory and extra vars work unchanged on AWX execution nodes.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ansible_runner

from clusterforge import paths
from clusterforge.sshmux import ansible_env, private_control_dir

__all__ = ["ProvisionResult", "run_site", "write_private_extravars"]

SITE_PLAYBOOK = "site.yml"
# ansible-runner's stats keys -> the names reported per host.
_STAT_KEYS = {
    "ok": "ok",
    "changed": "changed",
    "failures": "failed",
    "dark": "unreachable",
    "skipped": "skipped",
    "rescued": "rescued",
    "ignored": "ignored",
}
_FAILURE_MESSAGE_MAX_CHARS = 2000


@dataclass(frozen=True)
class ProvisionResult:
    """What one run of the site playbook did, host by host."""

    ok: bool
    changed_per_host: dict[str, int]
    # host -> "<task name>: <module message>" for the first task that failed there.
    failed_hosts: dict[str, str]
    unreachable_hosts: list[str]
    # host -> {ok, changed, failed, unreachable, skipped, rescued, ignored}
    stats: dict[str, dict[str, int]]
    rc: int = 0
    status: str = ""
    duration_s: float = 0.0
    artifact_dir: Path | None = None
    unreachable_messages: dict[str, str] = field(default_factory=dict)
    # host -> [(task, file)] of every task that changed (in check mode: would change); file "" when none named
    changes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def run_site(
    inventory_path: Path,
    private_data_dir: Path,
    limit: str | Iterable[str] | None = None,
    tags: str | Iterable[str] | None = None,
    extravars: Mapping[str, Any] | None = None,
    ssh_config: Path | None = None,
    *,
    playbooks_dir: Path | None = None,
    skip_tags: str | Iterable[str] | None = None,
    progress: Callable[[str], Any] | None = None,
    cancel: Callable[[], bool] | None = None,
    playbook: str = SITE_PLAYBOOK,
    check: bool = False,
) -> ProvisionResult:
    """Run playbooks/site.yml (or ``playbook``, a name in the playbooks directory) against
    ``inventory_path`` and collect per-host results.

    ``private_data_dir`` receives ansible-runner's artifacts (events, stdout, rc).
    ``ssh_config`` is passed to every ssh/scp/sftp call as ``-F``. ``progress`` receives one
    line per host and finished task (clusterforge.provision.progress); ``cancel`` is polled while
    the playbook runs and stops it (its whole process group) once it returns True. ``check`` runs it
    in Ansible's check mode with diffs: nothing changes on the hosts, and ``changes`` names each task
    (and file) that would.
    """
    playbooks_dir = Path(playbooks_dir or paths.playbooks_dir()).resolve()
    private_data_dir = Path(private_data_dir).resolve()
    private_data_dir.mkdir(parents=True, exist_ok=True)
    # ansible-runner writes a `cmdline` argument to env/cmdline, and every later run in this directory that
    # passes none reads it back: a drift check's --check would put the next provisioning run in check mode
    # (changing nothing). No run leaves it behind, and one left by an older version is removed first.
    cmdline_file = private_data_dir / "env" / "cmdline"
    cmdline_file.unlink(missing_ok=True)
    started = time.monotonic()
    with private_control_dir() as control_dir, _removed_after(cmdline_file):
        run = ansible_runner.run(
            private_data_dir=str(private_data_dir),
            project_dir=str(playbooks_dir),
            playbook=playbook,
            inventory=str(Path(inventory_path).resolve()),
            limit=_join(limit),
            tags=_join(tags),
            skip_tags=_join(skip_tags),
            extravars=dict(extravars or {}),
            envvars={**_environment(playbooks_dir, ssh_config), **ansible_env(control_dir)},
            quiet=True,
            rotate_artifacts=20,
            **({"cmdline": "--check --diff"} if check else {}),
            **_callbacks(progress, cancel),
        )
    duration_s = time.monotonic() - started
    return _result(run, duration_s)


def write_private_extravars(private_data_dir: Path, data: Mapping[str, Any]) -> Path:
    """Extra vars that hold a secret, as ansible-runner's env/extravars (0600, JSON), for a run_site with
    extravars=None: extra vars handed to run_site are also written into the run's artifacts (the command
    line). The caller removes the file after the run. Returns its path."""
    path = Path(private_data_dir) / "env" / "extravars"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(dict(data), handle)
    return path


@contextmanager
def _removed_after(path: Path) -> Iterator[None]:
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def _environment(playbooks_dir: Path, ssh_config: Path | None) -> dict[str, str]:
    env = {
        "ANSIBLE_CONFIG": str(playbooks_dir / "ansible.cfg"),
        "ANSIBLE_ROLES_PATH": str(paths.roles_dir()),
        # ansible-runner appends its own callback directory to this one.
        "ANSIBLE_CALLBACK_PLUGINS": str(playbooks_dir / "callback_plugins"),
        # ansible-playbook lives next to the interpreter running us (a venv need not be active).
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        # ansible-runner turns host key checking off unless told otherwise; a caller cannot turn it off here.
        "ANSIBLE_HOST_KEY_CHECKING": "True",
    }
    if ssh_config is not None:
        env["ANSIBLE_SSH_COMMON_ARGS"] = f"-F {Path(ssh_config).resolve()}"
    return env


def _callbacks(progress: Callable[[str], Any] | None, cancel: Callable[[], bool] | None) -> dict[str, Any]:
    callbacks: dict[str, Any] = {}
    if progress is not None:
        from clusterforge.provision.progress import TaskProgress

        callbacks["event_handler"] = TaskProgress(progress)
    if cancel is not None:
        callbacks["cancel_callback"] = cancel
    return callbacks


def _join(value: str | Iterable[str] | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return ",".join(value)


def _result(run: Any, duration_s: float) -> ProvisionResult:
    raw_stats: dict[str, dict[str, int]] = run.stats or {}
    hosts = sorted({host for key in _STAT_KEYS for host in raw_stats.get(key, {})})
    stats = {
        host: {name: int(raw_stats.get(key, {}).get(host, 0)) for key, name in _STAT_KEYS.items()} for host in hosts
    }
    failed_hosts: dict[str, str] = {}
    unreachable_messages: dict[str, str] = {}
    changes: dict[str, list[tuple[str, str]]] = {}
    for event in run.events:
        kind = event.get("event")
        data = event.get("event_data", {})
        host = data.get("host")
        if not host:
            continue
        if kind == "runner_on_ok" and (data.get("res") or {}).get("changed"):
            task = str(data.get("task") or "?")
            changes.setdefault(host, []).extend((task, where) for where in changed_files(data.get("res") or {}))
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            failed_hosts.setdefault(host, _failure_message(data))
        elif kind == "runner_on_unreachable":
            unreachable_messages.setdefault(host, _failure_message(data))
    # A host can be unreachable in stats without an event (e.g. a dark host at gather time).
    unreachable_hosts = sorted(set(unreachable_messages) | {h for h, s in stats.items() if s["unreachable"]})
    for host, counts in stats.items():
        if counts["failed"] and host not in failed_hosts:
            failed_hosts[host] = "failed (no failure event recorded)"
    ok = run.rc == 0 and run.status == "successful" and not failed_hosts and not unreachable_hosts
    return ProvisionResult(
        ok=ok,
        changed_per_host={host: counts["changed"] for host, counts in stats.items()},
        failed_hosts=failed_hosts,
        unreachable_hosts=unreachable_hosts,
        stats=stats,
        rc=int(run.rc) if run.rc is not None else -1,
        status=str(run.status),
        duration_s=duration_s,
        artifact_dir=Path(run.config.artifact_dir) if getattr(run, "config", None) else None,
        unreachable_messages=unreachable_messages,
        changes=changes,
    )


def changed_files(result: Mapping[str, Any]) -> list[str]:
    """What a changed task result is about, one entry per changed loop item (its file, else its loop label)
    or one for a task without a loop."""
    items = result.get("results")
    if not isinstance(items, list):
        return [changed_file(result)]
    found = [changed_file(item) or str(item.get("_ansible_item_label") or "")
             for item in items if isinstance(item, Mapping) and item.get("changed")]
    return found or [""]


def changed_file(result: Mapping[str, Any]) -> str:
    """The file a task's result is about: its dest/path, else the diff's before header, else the module's
    dest/path, else the diff's after header, else the module's name, else "". A template's check-mode result
    for a missing file has no dest and no before header, and its after header is the rendered temporary
    source on the controller; its invocation's module_args name the dest (seen with ansible-core 2.19)."""
    for key in ("dest", "path"):
        if isinstance(result.get(key), str) and result[key].startswith("/"):
            return result[key]
    diffs = result.get("diff")
    diffs = [d for d in (diffs if isinstance(diffs, list) else [diffs]) if isinstance(d, dict)]

    def header(key: str) -> list[str]:
        return [d[key] for d in diffs if isinstance(d.get(key), str) and d[key].startswith("/")][:1]

    invocation = result.get("invocation")  # a string under no_log ("CENSORED: ...")
    args = invocation.get("module_args") if isinstance(invocation, Mapping) else None
    args = args if isinstance(args, Mapping) else {}

    def arg(*keys: str) -> list[str]:
        return [args[key] for key in keys if isinstance(args.get(key), str) and args[key]]

    return next(iter([*header("before_header"), *arg("dest", "path"), *header("after_header"), *arg("name")]), "")


def _failure_message(event_data: Mapping[str, Any]) -> str:
    result = event_data.get("res") or {}
    parts = [str(result.get("msg", "")).strip()]
    for key in ("stderr", "module_stderr"):
        text = str(result.get(key, "") or "").strip()
        if text and text not in parts[0]:
            parts.append(text)
    message = " | ".join(p for p in parts if p) or "failed without a message"
    task = event_data.get("task") or "?"
    return f"{task}: {message}"[:_FAILURE_MESSAGE_MAX_CHARS]
