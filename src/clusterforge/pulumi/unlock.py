"""Clear a stack's locks by hand (`clusterforge unlock`): what holds the stack, and removing it.

A stack has two kinds of lock record: clusterforge's (clusterforge.pulumi.stacklock: who, since when,
from where) and the engine's own (pkg/backend/diy: pid, user, host, time). A run that is gone is
normally cleared by the next `up`; this is for the rest (a lost machine before its lease ran out, a
plain `pulumi` run that crashed). A lock whose process still runs on this machine is never cleared:
stopping that process releases it.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

from clusterforge.ops.proctree import alive
from clusterforge.pulumi.automation import Backend, open_stack
from clusterforge.pulumi.recovery import engine_locks
from clusterforge.pulumi.stacklock import Holder, store_for

__all__ = ["StackLocks", "clear", "inspect"]


@dataclass(frozen=True)
class StackLocks:
    stack: str
    where: str  # the lock store, for messages (the URL masked)
    holder: Holder | None
    engine: tuple[str, ...]  # "pid N on HOST since T" of each engine lock record

    @property
    def locked(self) -> bool:
        return self.holder is not None or bool(self.engine)

    @property
    def running_here(self) -> bool:
        """The holder's process runs on this machine: stop it rather than unlock."""
        return self.holder is not None and self.holder.host == socket.gethostname() and alive(self.holder.pid)

    def lines(self) -> list[str]:
        found = [f"clusterforge lock: {self.holder.describe()}"] if self.holder else []
        found += [f"engine lock: {record}" for record in self.engine]
        return found


def _engine_records(backend: Backend, stack: str) -> tuple[str, ...]:
    return tuple(f"pid {r.get('pid')} ({r.get('username')}@{r.get('hostname')}) since {r.get('timestamp')}"
                 for r in engine_locks(backend.url, stack))


def inspect(backend: Backend, stack: str) -> StackLocks:
    store = store_for(backend.url)
    return StackLocks(stack, store.where, store.holder(stack), _engine_records(backend, stack))


def clear(backend: Backend, locks: StackLocks) -> list[str]:
    """Remove ``locks`` (as inspected and confirmed); what was removed, one line each. A holder that
    changed since it was inspected is left alone (another run took the stack meanwhile)."""
    done = []
    if locks.holder is not None:
        if store_for(backend.url).clear(locks.holder):
            done.append(f"stack {locks.stack}: cleared the clusterforge lock of {locks.holder.describe()}")
        else:
            done.append(f"stack {locks.stack}: the clusterforge lock changed meanwhile (another run holds it now);"
                        " left as it is")
    if locks.engine:
        handle: Any = open_stack(locks.stack, None, backend)
        handle.cancel()  # a DIY backend's cancel deletes the stack's engine lock records
        done.append(f"stack {locks.stack}: removed {len(locks.engine)} engine lock record(s)")
    return done
