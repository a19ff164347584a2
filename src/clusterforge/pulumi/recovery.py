"""Continue after an interrupted engine run: stale stack locks and pending operations.

An engine killed mid-run (Ctrl-C, SIGTERM, a lost machine) leaves its lock record in the backend
(``.pulumi/locks/<org>/<project>/<stack>/<id>.json``: pid, hostname, time; a file in a file:// backend,
a row of the state table in a postgres:// one) and, in the checkpoint, the operations it had started
(``pending_operations``). The next run refuses the lock and warns about the operations. ``recover``
removes a lock whose engine is gone from this machine (a live engine's lock is reported, never
removed) and drops the pending operations: every clusterforge provider's create and update converge,
so the next `up` simply does them again. A run that holds the stack's clusterforge lock
(clusterforge.pulumi.stacklock) passes ``owned``: every clusterforge run takes that lock before the
engine's, so an engine lock from another machine then belongs to a run that is gone, and is removed too.
"""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from clusterforge.ops.proctree import alive
from clusterforge.pulumi._pg import Psql
from clusterforge.pulumi.backend_url import BackendUrl

__all__ = ["Recovery", "StackBusy", "engine_locks", "lock_files", "pending_operations", "recover"]


class StackBusy(RuntimeError):
    """The stack is locked by an engine that is still running (or on another machine)."""


@dataclass
class Recovery:
    stopped: list[str] = field(default_factory=list)  # "pid N: command" of each leftover process stopped
    released: list[str] = field(default_factory=list)  # "pid N (started T)" of each stale lock removed
    cleared: list[str] = field(default_factory=list)  # "creating urn" of each pending operation dropped

    def lines(self, stack: str) -> list[str]:
        out = []
        if self.stopped:
            out.append(f"stack {stack}: stopped {len(self.stopped)} process(es) an interrupted run left running: "
                       + "; ".join(self.stopped))
        if self.released:
            out.append(f"stack {stack}: released the lock of an interrupted run ({'; '.join(self.released)})")
        if self.cleared:
            out.append(f"stack {stack}: cleared {len(self.cleared)} pending operation(s) of an interrupted run"
                       f" (done again now): {', '.join(self.cleared)}")
        return out


def lock_files(backend_url: str, stack: str) -> list[Path]:
    """Lock files of ``stack`` in a file:// backend (none for other backends)."""
    parts = urlsplit(backend_url)
    if parts.scheme != "file":
        return []
    locks = Path(parts.path) / ".pulumi" / "locks"
    if not locks.is_dir():
        return []
    return sorted(p for p in locks.rglob("*.json") if p.parent.name == stack)


def engine_locks(backend_url: str, stack: str, env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The engine's lock records of ``stack`` (pid, username, hostname, timestamp), of either backend kind."""
    if urlsplit(backend_url).scheme != "postgres":
        found = []
        for path in lock_files(backend_url, stack):
            try:
                found.append(json.loads(path.read_text()))
            except (OSError, ValueError):
                continue  # removed meanwhile, or being written
        return found
    url = BackendUrl.parse(backend_url)
    rows = Psql(url, env).rows("SELECT key, data->>'data' FROM :\"table\" WHERE key LIKE '%.pulumi/locks/%';",
                               table=url.table)
    records = []
    for key, data in rows:
        if key.rsplit("/", 2)[-2:-1] != [stack]:
            continue
        try:
            records.append(json.loads(base64.b64decode(data)))
        except ValueError:
            continue
    return records


def _describe(content: dict[str, Any]) -> str:
    return f"pid {content.get('pid')} on {content.get('hostname')} since {content.get('timestamp')}"


def stale_locks(backend_url: str, stack: str, env: Mapping[str, str] | None = None,
                owned: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(stale, live) lock contents. Stale: written on this machine by a process that no longer runs, or
    (``owned``: this run holds the stack's clusterforge lock) written on another machine."""
    stale: list[dict[str, Any]] = []
    live: list[dict[str, Any]] = []
    host = socket.gethostname()
    for content in engine_locks(backend_url, stack, env):
        mine = content.get("hostname") == host
        gone = not alive(int(content.get("pid") or 0)) if mine else owned
        (stale if gone else live).append(content)
    return stale, live


def pending_operations(deployment: dict[str, Any] | None) -> list[str]:
    ops = (deployment or {}).get("pending_operations") or []
    return [f"{op.get('type', '?')} {(op.get('resource') or {}).get('urn', '?')}" for op in ops]


def recover(handle: Any, backend_url: str, stack: str, *, clear_pending: bool = True,
            env: Mapping[str, str] | None = None, owned: bool = False) -> Recovery:
    """Make ``stack`` ready for the next run; raises StackBusy while another engine holds it.

    With no engine holding the stack, a process still working in the stack's work dir (a provider
    whose engine was killed, an ansible-playbook whose provider was) and any Pulumi plugin whose
    engine is gone (a language host) are leftovers of an interrupted run: they are stopped, with
    their children, before anything else.
    """
    result = Recovery()
    stale, live = stale_locks(backend_url, stack, env, owned)
    if live:
        raise StackBusy(f"stack {stack} is being changed by another run ({'; '.join(map(_describe, live))});"
                        " wait for it, or stop it (its lock is released when it stops)")
    work_dir = getattr(getattr(handle, "workspace", None), "work_dir", None)
    if work_dir:
        from clusterforge.ops.proctree import leftovers_of, orphaned_plugins, snapshot, stop_tree

        procs = snapshot()
        left = leftovers_of(str(work_dir), procs) + orphaned_plugins(procs)
        if left:
            stopped = stop_tree(grace=3, roots=[p.pid for p in left])
            result.stopped = [f"pid {p.pid}: {p.command[:80]}" for p in stopped]
    if stale:
        handle.cancel()  # a DIY backend's cancel deletes the stack's lock records
        result.released = [_describe(c) for c in stale]
    if clear_pending:
        from pulumi.automation import Deployment

        exported = handle.export_stack()
        deployment = dict(exported.deployment or {})
        result.cleared = pending_operations(deployment)
        if result.cleared:
            deployment.pop("pending_operations", None)
            handle.import_stack(Deployment(version=exported.version, deployment=deployment))
    return result
