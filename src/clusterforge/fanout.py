"""Independent pure work over every core: a forked worker per extra core, results in item order.

Each switch's files and each host's host_vars are pure functions of the Plan, and so are the two
halves of the fabric checks, so a large render (or check) is split: item i goes to worker i mod n
(the Plan lists similar devices together, so the shares cost about the same). The calling process
does share 0 itself; each forked child inherits the Plan (copy-on-write: nothing is sent to it),
does its share and sends the results back through a pipe in batches (pickle), which a reader
thread of the caller takes as they come, so no worker holds its whole share. Results are
reassembled in item order, so the output is the serial output.

By default the serial path is taken for small inputs (a fork costs more than it saves), on one
core, on platforms without fork, and in a process that runs other threads (a forked child of a
threaded process can deadlock on a lock another thread held: the Pulumi program is one). A child
that fails in any way has its share done again in the calling process, where an exception is
raised as it would be serially."""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["fan_out", "default_workers", "MIN_PER_WORKER", "MAX_WORKERS"]

T = TypeVar("T")
R = TypeVar("R")

MIN_PER_WORKER = 256  # items each worker must get for a fork to pay off (~2 ms per item rendered)
MAX_WORKERS = 4  # each child's copy-on-write pages add to the peak memory
BATCH = 64  # results a child sends at once; the parent's reader thread takes them as they come


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
        for share in range(1, n):
            children.append(_spawn(render, items, share, n))
        for child in children:  # readers start once every fork is done: no child inherits a thread
            child.reader.start()
        results: list[list[R] | None] = [[render(item) for item in items[0::n]]]
        results += [child.results() for child in children]
    finally:  # the parent's share raised, or an interrupt: end the children still running
        for child in children:
            child.end()
    out: list[R] = [None] * len(items)  # type: ignore[list-item]
    for share, rendered in enumerate(results):
        if rendered is None or len(rendered) != len(items[share::n]):  # the child failed: render here
            rendered = [render(item) for item in items[share::n]]
        out[share::n] = rendered
    return out


class _Child:
    """A forked worker: its pid, and a thread reading its batches as it sends them (so neither the
    child nor the pipe holds more than a batch while the parent renders its own share)."""

    def __init__(self, pid: int, read: int) -> None:
        self.pid, self.read = pid, read
        self.batches: list[list] = []
        self.failed = False
        self.status: int | None = None
        self.reader = threading.Thread(target=self._read, name=f"fanout-{pid}", daemon=True)

    def _read(self) -> None:
        with os.fdopen(self.read, "rb") as pipe:
            try:
                while True:
                    self.batches.append(pickle.load(pipe))
            except EOFError:  # the child closed the pipe
                pass
            except Exception:  # a torn or unreadable stream
                self.failed = True

    def results(self) -> list | None:
        """The child's results once it has exited, or None if it failed (killed, raised, garbled)."""
        self.reader.join()
        self._reap()
        if self.failed or self.status != 0 or not all(isinstance(b, list) for b in self.batches):
            return None
        return [result for batch in self.batches for result in batch]

    def end(self) -> None:
        if self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            if self.reader.ident is not None:
                self.reader.join()  # the killed child's pipe ends: the reader sees EOF
            else:  # never started: the pipe is still ours to close
                os.close(self.read)
            self._reap()

    def _reap(self) -> None:
        if self.status is None:
            _, status = os.waitpid(self.pid, 0)
            self.status = os.waitstatus_to_exitcode(status)


def _spawn(render: Callable[[T], R], items: Sequence[T], share: int, n: int) -> _Child:
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: render, send, and leave without running the parent's exit handlers
        code = 1
        try:
            os.close(read)
            gc.disable()  # a short life: never walk the inherited heap (it would copy every page of it)
            for signum in (signal.SIGINT, signal.SIGTERM):  # the parent's handlers are not the child's
                signal.signal(signum, signal.SIG_DFL)  # an interrupt ends the child; the parent decides
            with os.fdopen(write, "wb") as pipe:
                batch: list = []
                for item in items[share::n]:
                    batch.append(render(item))
                    if len(batch) == BATCH:
                        pickle.dump(batch, pipe, protocol=pickle.HIGHEST_PROTOCOL)
                        batch = []
                pickle.dump(batch, pipe, protocol=pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return _Child(pid, read)
