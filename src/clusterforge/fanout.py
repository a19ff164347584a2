"""Independent pure work over every core: a forked worker per extra core, results in item order.

Each switch's files and each host's host_vars are pure functions of the Plan, and so are the two
halves of the fabric checks, so a large render (or check) is split: item i goes to worker i mod n
(the Plan lists similar devices together, so the shares cost about the same). The calling process
does share 0 itself; each forked child inherits the Plan (copy-on-write: nothing is sent to it),
does its share and sends the results back through a pipe (pickle, streamed). Results are
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
MAX_WORKERS = 4  # each child holds its share of the text until the parent reads it: bounds peak memory


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
    children: list[tuple[int, int]] = []
    try:
        for share in range(1, n):
            children.append(_spawn(render, items, share, n))
        results: list[list[R] | None] = [[render(item) for item in items[0::n]]]
        while children:
            results.append(_collect(children.pop(0)))  # _collect reaps it, whatever happens
    finally:  # the parent's share raised, or an interrupt: end the children still running
        for pid, read in children:
            _end(pid, read)
    out: list[R] = [None] * len(items)  # type: ignore[list-item]
    for share, rendered in enumerate(results):
        if rendered is None or len(rendered) != len(items[share::n]):  # the child failed: render here
            rendered = [render(item) for item in items[share::n]]
        out[share::n] = rendered
    return out


def _spawn(render: Callable[[T], R], items: Sequence[T], share: int, n: int) -> tuple[int, int]:
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: render, send, and leave without running the parent's exit handlers
        code = 1
        try:
            os.close(read)
            gc.disable()  # a short life: never walk the inherited heap (it would copy every page of it)
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # an interrupt ends the child; the parent decides
            with os.fdopen(write, "wb") as pipe:
                pickle.dump([render(item) for item in items[share::n]], pipe, protocol=pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _collect(child: tuple[int, int]) -> list | None:
    """The child's results, or None if it failed (killed, raised, sent something unreadable)."""
    pid, read = child
    try:
        with os.fdopen(read, "rb") as pipe:
            try:
                rendered = pickle.load(pipe)
            except Exception:
                rendered = None
    finally:
        _, status = os.waitpid(pid, 0)
    return rendered if os.waitstatus_to_exitcode(status) == 0 and isinstance(rendered, list) else None


def _end(pid: int, read: int) -> None:
    os.close(read)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
