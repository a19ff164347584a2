"""Engine runs that survive faults: lock the stack, recover it before a run, stop cleanly when interrupted.

``locked`` holds the stack's clusterforge lock (clusterforge.pulumi.stacklock) for a whole `up`/`destroy`:
a second run is refused naming the holder, a gone run's lock is cleared with a message. ``prepare``
(inside it) releases the lock of an engine that is gone and drops the pending operations it left,
saying so; ``guarded`` runs the engine action interruptibly and, on SIGINT/SIGTERM, names what was in
flight, stops every child process and leaves the stack ready for the next run (no manual
`pulumi cancel` or `refresh --clear-pending-creates`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from clusterforge.ops.interrupt import Interrupted, run_interruptible
from clusterforge.pulumi.automation import ChangeSummary
from clusterforge.pulumi.recovery import StackBusy, recover
from clusterforge.pulumi.stacklock import Holder, StackLocked

__all__ = ["Interrupted", "StackBusy", "StackLocked", "guarded", "locked", "prepare"]

T = TypeVar("T")
Say = Callable[[str], Any]


def backend_url(handle: Any) -> str:
    return str(handle.workspace.env_vars.get("PULUMI_BACKEND_URL", ""))


@contextlib.contextmanager
def locked(handle: Any, url: str, stack: str, verb: str, say: Say, wait_s: float = 0.0) -> Iterator[Holder]:
    """Hold ``stack``'s lock in the backend at ``url`` (password included) for the block; StackLocked when
    another run holds it (after up to ``wait_s`` seconds of waiting for it), ValueError for a lease setting that is
    not a number of seconds."""
    from clusterforge.pulumi import automation, stacklock

    lease = stacklock.lease_seconds(automation.managed_config(handle))
    with stacklock.held(stacklock.store_for(url), stack, verb, lease, say, wait_s) as mine:
        yield mine


def prepare(handle: Any, stack: str, say: Say, *, clear_pending: bool = True, owned: bool = False) -> None:
    """Raise StackBusy while another run holds the stack; otherwise recover what an interrupted one left.
    ``owned``: this run holds the stack's clusterforge lock (see recovery.recover)."""
    env = dict(getattr(handle.workspace, "env_vars", None) or {})
    for line in recover(handle, backend_url(handle), stack, clear_pending=clear_pending, env=env,
                        owned=owned).lines(stack):
        say(line)


def _describe_stopped(exc: Interrupted) -> str:
    names: dict[str, int] = {}
    for proc in exc.stopped:
        exe = proc.argv[0].rsplit("/", 1)[-1] if proc.argv else "?"
        if exe.startswith("python") and len(proc.argv) > 1:
            exe = next((a.rsplit("/", 1)[-1] for a in proc.argv[1:] if not a.startswith("-")), exe)
        names[exe] = names.get(exe, 0) + 1
    return ", ".join(f"{n}× {exe}" if n > 1 else exe for exe, n in sorted(names.items())) or "none"


def _engine_cancel(signum: int, timeout: float, say: Say) -> None:
    """The first signal of an `up` that saves its state once: the engine gets its graceful cancel (in-flight
    steps finish, the state is written) and ``timeout`` seconds for it. The engine counts signals (a second
    one terminates it without a save), so it is sent one only for a SIGTERM: that reached this process
    alone (a service manager, `kill`), where a terminal's Ctrl-C (SIGINT) goes to the whole foreground
    process group, the engine included."""
    import os
    import signal

    from clusterforge.ops.proctree import descendants

    say(f"letting the engine finish its in-flight steps and save the state (up to {timeout:.0f} s; "
        "a second Ctrl-C stops it now)")
    if signum == signal.SIGINT:
        return
    for proc in descendants(os.getpid()):
        if proc.argv and proc.argv[0].endswith("/pulumi"):
            try:
                os.kill(proc.pid, signal.SIGINT)
            except ProcessLookupError:
                continue


def guarded(action: Callable[[ChangeSummary], T], handle: Any, stack: str, verb: str, say: Say,
            engine_closes: float = 0.0, owned: bool = False) -> T:
    """``action(summary)`` interruptibly; on a signal report, stop children, recover, re-raise Interrupted.
    ``engine_closes`` > 0: the engine saves its state only when it closes the run (checkpoints "end"), so it
    gets up to that many seconds to cancel and save before the other children are stopped."""
    summary = ChangeSummary()
    on_drain = (lambda signum: _engine_cancel(signum, engine_closes, say)) if engine_closes > 0 else None
    try:
        return run_interruptible(lambda: action(summary), drain=engine_closes, on_drain=on_drain)
    except Interrupted as exc:
        say(f"{verb} of stack {stack} interrupted by {exc.signame}")
        flying = summary.in_flight()
        if flying:
            say("in flight: " + ", ".join(f"{step.op} {step.type.rsplit(':', 1)[-1]} {step.name}" for step in flying))
        say(f"stopped {len(exc.stopped)} process(es): {_describe_stopped(exc)}")
        try:
            prepare(handle, stack, say, owned=owned)
        except Exception as problem:  # noqa: BLE001 - reported; the next run recovers again
            say(f"could not recover the stack now ({problem}); the next run will")
        done = {s.urn for s in summary.steps if s.op != "same" and s.urn in summary.finished}
        say(f"the next run continues from here ({len(done)} change(s) finished before the interrupt)")
        raise
