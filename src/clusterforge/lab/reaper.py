"""Run a command as a child subreaper: what it leaves behind is reaped here, not left a zombie.

libvirtd starts QEMU daemonized (its capability probes and every domain), so a QEMU that exits is an orphan
and belongs to the nearest subreaper, else to PID 1. PID 1 on this machine is not an init that reaps
orphans: a finished QEMU stayed a zombie, ``kill(pid, 0)`` kept succeeding, and libvirt waited out its
kill timeout (``virProcessKillPainfullyDelay``: "Failed to terminate process ... with SIGKILL: Device or
resource busy") for each: 80 s for the two capability probes at the first ``defineXML`` of a lab, and again
whenever a VM powered itself off. (The CLI and the Pulumi providers are subreapers too, but they reap only
what they wait for.) Started as the parent of libvirtd (``lab.libvirtd.ensure``), this process marks itself
a subreaper (``ops.proctree.become_subreaper``), runs the command, passes SIGTERM/SIGINT/SIGHUP on
to it, reaps every child until none is left and exits with the command's status.

    python -m clusterforge.lab.reaper COMMAND [ARG...]
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

from clusterforge.ops.proctree import become_subreaper

__all__ = ["main"]


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m clusterforge.lab.reaper COMMAND [ARG...]", file=sys.stderr)
        return 2
    if not become_subreaper():
        print("reaper: prctl(PR_SET_CHILD_SUBREAPER) failed", file=sys.stderr)
        return 1
    # the forwarded signals stay blocked from before the fork until their handlers are set, so one that arrives
    # while the command starts is forwarded to it, not taken by the reaper's default action
    forwarded = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, forwarded)
    child = os.fork()
    if child == 0:
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for sig in forwarded:
        signal.signal(sig, forward)
    signal.pthread_sigmask(signal.SIG_SETMASK, before)
    status = 0
    while True:
        try:
            pid, wait_status = os.wait()
        except ChildProcessError:
            return status
        except InterruptedError:
            continue
        if pid == child:
            status = os.waitstatus_to_exitcode(wait_status)
            status = 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
