"""Run a long action so that SIGINT/SIGTERM stop it cleanly.

On the first SIGINT or SIGTERM the action is abandoned, every descendant process is stopped
(process groups included; lab containers and the apt proxy excepted), orphans are reaped, and
``Interrupted`` is raised for the caller to report and clean up after (release locks, say). This
process is made a child subreaper first, so a process whose parent died mid-run (an
ansible-playbook under a killed provider) is still ours to stop rather than PID 1's.
"""

from __future__ import annotations

import signal
import threading
import warnings
from collections.abc import Callable
from typing import TypeVar

from clusterforge.ops.proctree import Proc, become_subreaper, reap, stop_tree

__all__ = ["Interrupted", "run_interruptible"]

T = TypeVar("T")
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):  # noqa: N818 - like KeyboardInterrupt: library `except Exception` lets it pass
    """The action was interrupted; ``stopped`` lists the processes that were stopped."""

    def __init__(self, signum: int, stopped: list[Proc] | None = None) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.stopped = stopped or []

    @property
    def signame(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class _Signalled(BaseException):  # noqa: N818
    def __init__(self, signum: int) -> None:
        self.signum = signum


def _quiet_abandoned_threads() -> None:
    """Threads reading the abandoned children's pipes (the Automation API's) fail when those close:
    that is the interrupt, not news, so their tracebacks and warnings are not printed."""
    threading.excepthook = lambda args: None
    warnings.filterwarnings("ignore", message="Error in event stream")


def _raise(signum: int, _frame: object) -> None:
    for sig in SIGNALS:  # one interrupt is enough; the clean-up must not be interrupted again
        signal.signal(sig, signal.SIG_IGN)
    _quiet_abandoned_threads()
    raise _Signalled(signum)


def run_interruptible(action: Callable[[], T], *, grace: float = 5.0, drain: float = 0.0,
                      on_drain: Callable[[int], None] | None = None) -> T:
    """``action()``; on SIGINT/SIGTERM stop every descendant and raise Interrupted (from the main thread only).

    ``drain`` > 0: the first signal does not abandon the action at once. ``on_drain(signum)`` is called
    (in the signal handler: it must be quick, e.g. pass the signal on to a child) and the action may end
    on its own for up to ``drain`` seconds (an engine cancelling its run and saving its state); then, or
    at a second signal, what is left is stopped as above. Interrupted is raised either way."""
    become_subreaper()
    previous = {sig: signal.getsignal(sig) for sig in (*SIGNALS, signal.SIGALRM)}
    first: list[int] = []

    def handler(signum: int, frame: object) -> None:
        if drain <= 0 or first:
            _raise(first[0] if first else signum, frame)
        first.append(signum)
        signal.signal(signal.SIGALRM, lambda _s, f: _raise(first[0], f))
        signal.setitimer(signal.ITIMER_REAL, drain)
        if on_drain is not None:
            on_drain(signum)

    for sig in SIGNALS:
        signal.signal(sig, handler)
    try:
        result = action()
    except _Signalled as exc:
        stopped = stop_tree(grace=grace)
        raise Interrupted(exc.signum, stopped) from None
    except BaseException:
        if not first:
            raise
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        _quiet_abandoned_threads()
        raise Interrupted(first[0], stop_tree(grace=grace)) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, old in previous.items():
            signal.signal(sig, old)
        reap()
    if first:  # it ended on its own after the signal (it had finished, or it cancelled cleanly)
        raise Interrupted(first[0], stop_tree(grace=grace))
    return result
