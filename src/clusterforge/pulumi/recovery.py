"""Continue after an interrupted engine run: stale stack locks and pending operations.

An engine killed mid-run (Ctrl-C, SIGTERM, a lost machine) leaves its lock file in the file
backend (``.pulumi/locks/<org>/<project>/<stack>/<id>.json``: pid, hostname, time) and, in the
checkpoint, the operations it had started (``pending_operations``). The next run refuses the lock
and warns about the operations. ``recover`` removes a lock whose engine is gone from this machine
(a live engine's lock is reported, never removed) and drops the pending operations: every
clusterforge provider's create and update converge, so the next `up` simply does them again.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from clusterforge.ops.proctree import alive

__all__ = ["Recovery", "StackBusy", "lock_files", "pending_operations", "recover"]


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


def _describe(content: dict[str, Any]) -> str:
    return f"pid {content.get('pid')} on {content.get('hostname')} since {content.get('timestamp')}"


def stale_locks(backend_url: str, stack: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(stale, live) lock contents. Stale: written on this machine by a process that no longer runs."""
    stale, live = [], []
    host = socket.gethostname()
    for path in lock_files(backend_url, stack):
        try:
            content = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # removed meanwhile, or being written
        mine = content.get("hostname") == host
        (stale if mine and not alive(int(content.get("pid") or 0)) else live).append(content)
    return stale, live


def pending_operations(deployment: dict[str, Any] | None) -> list[str]:
    ops = (deployment or {}).get("pending_operations") or []
    return [f"{op.get('type', '?')} {(op.get('resource') or {}).get('urn', '?')}" for op in ops]


def recover(handle: Any, backend_url: str, stack: str, *, clear_pending: bool = True) -> Recovery:
    """Make ``stack`` ready for the next run; raises StackBusy while another engine holds it.

    With no engine holding the stack, a process still working in the stack's work dir (a provider
    whose engine was killed, an ansible-playbook whose provider was) and any Pulumi plugin whose
    engine is gone (a language host) are leftovers of an interrupted run: they are stopped, with
    their children, before anything else.
    """
    result = Recovery()
    stale, live = stale_locks(backend_url, stack)
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
        handle.cancel()  # the file backend's cancel deletes the stack's lock files
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
