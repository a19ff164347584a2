"""Independent pure work over every core: a forked worker per extra core, results in item order.

Each switch's files and each host's host_vars are pure functions of the Plan, and so are the two
halves of the fabric checks, so a large render (or check) is split: items are dealt in turn (the
Plan lists similar devices together, so the shares cost about what their sizes say). The calling process
does share 0 itself; each forked child inherits the Plan (copy-on-write: nothing is sent to it),
does its share and writes the results in batches (pickle) to an unlinked temporary file, so no
worker holds its whole share nor waits for the caller to read; the caller reads them once its own
share is done. Results are reassembled in item order, so the output is the serial output.

By default the serial path is taken for small inputs (a fork costs more than it saves), on one
core, on platforms without fork, and in a process that runs other threads (a forked child of a
threaded process can deadlock on a lock another thread held: the Pulumi program is one). A child
that fails in any way has its share done again in the calling process, where an exception is
raised as it would be serially."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO, TypeVar

__all__ = ["fan_out", "default_workers", "MIN_PER_WORKER", "MAX_WORKERS"]

T = TypeVar("T")
R = TypeVar("R")

MIN_PER_WORKER = 256  # items each worker must get for a fork to pay off (~2 ms per item rendered)
MAX_WORKERS = 4  # each child's copy-on-write pages add to the peak memory
BATCH = 64  # results a child writes at once
CALLER_WEIGHT = 0.85  # the caller's share of the items, relative to a worker's (it reads theirs too)


def default_workers() -> int:
    """Cores this process may run on, at most MAX_WORKERS; 1 where fork is unsafe or missing."""
    if not hasattr(os, "fork") or sys.platform != "linux" or threading.active_count() > 1:
        return 1
    return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0))))


def fan_out(render: Callable[[T], R], items: Sequence[T], workers: int | None = None) -> list[R]:
    """[render(item) for item in items], computed by up to `workers` processes (default: default_workers())."""
    if workers is None:  # as many as pay off: MIN_PER_WORKER items each
        n = min(default_workers(), len(items) // MIN_PER_WORKER)
    else:  # the caller's choice (a test; a caller that knows its threads hold no lock a renderer takes)
        n = min(workers, len(items)) if hasattr(os, "fork") else 1
    if n <= 1:
        return [render(item) for item in items]
    children: list[_Child] = []
    try:
        shares = _deal(len(items), n)
        for share in shares[1:]:
            try:
                children.append(_spawn(render, [items[i] for i in share]))
            except OSError:  # no temporary file or no fork (memory, process limits): the caller does the rest
                break
        results: list[list[R] | None] = [[render(items[i]) for i in shares[0]]]
        results += [child.results() for child in children]
        results += [None] * (n - len(results))
    finally:  # the parent's share raised, or an interrupt: end the children still running
        for child in children:
            child.end()
    out: list[R] = [None] * len(items)  # type: ignore[list-item]
    for share, rendered in zip(shares, results, strict=True):
        if rendered is None or len(rendered) != len(share):  # the child failed: render here
            rendered = [render(items[i]) for i in share]
        for i, result in zip(share, rendered, strict=True):
            out[i] = result
    return out


def _deal(count: int, n: int) -> list[list[int]]:
    """Item indexes of each process, dealt in turn to whoever has the least for its weight: the
    caller (share 0) takes CALLER_WEIGHT of a worker's, for it also reads the workers' results."""
    weights = [CALLER_WEIGHT] + [1.0] * (n - 1)
    shares: list[list[int]] = [[] for _ in range(n)]
    for i in range(count):
        shares[min(range(n), key=lambda k: (len(shares[k]) + 1) / weights[k])].append(i)
    return shares


class _Child:
    """A forked worker: its pid, and the unlinked file it writes its results to, batch by batch (so
    it never holds its whole share, and never waits for the caller to read)."""

    def __init__(self, pid: int, spool: IO[bytes]) -> None:
        self.pid, self.spool = pid, spool
        self.status: int | None = None

    def results(self) -> list | None:
        """The child's results once it has exited, or None if it failed (killed, raised, garbled)."""
        _, status = os.waitpid(self.pid, 0)
        self.status = os.waitstatus_to_exitcode(status)
        if self.status != 0:
            return None
        import pickle  # loaded by _spawn

        self.spool.seek(0)
        out: list = []
        try:
            while True:
                batch = pickle.load(self.spool)
                if not isinstance(batch, list):
                    return None
                out += batch
        except EOFError:  # the end of what the child wrote
            return out
        except Exception:  # a torn or unreadable file
            return None
        finally:
            self.spool.close()

    def end(self) -> None:
        import signal  # loaded by _spawn

        if self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.status = -signal.SIGKILL
        self.spool.close()


def _spawn(render: Callable[[T], R], items: Sequence[T]) -> _Child:
    import pickle  # here, not at import: a serial run (every small plan) never needs them
    import signal
    import tempfile

    spool = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _Child
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        spool.close()
        raise
    if pid == 0:  # the child: render, send, and leave without running the parent's exit handlers
        code = 1
        try:
            gc.disable()  # a short life: never walk the inherited heap (it would copy every page of it)
            for signum in (signal.SIGINT, signal.SIGTERM):  # the parent's handlers are not the child's
                signal.signal(signum, signal.SIG_DFL)  # an interrupt ends the child; the parent decides
            batch: list = []
            for item in items:
                batch.append(render(item))
                if len(batch) == BATCH:
                    pickle.dump(batch, spool, protocol=pickle.HIGHEST_PROTOCOL)
                    batch = []
            pickle.dump(batch, spool, protocol=pickle.HIGHEST_PROTOCOL)
            spool.flush()
            code = 0
        finally:
            os._exit(code)
    return _Child(pid, spool)
