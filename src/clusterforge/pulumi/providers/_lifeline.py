"""A dynamic provider must not outlive the engine run that started it.

When the engine is killed (Ctrl-C, SIGTERM to the CLI, the CLI killed), the provider process is
re-parented and would keep running its Ansible job. ``watch`` starts (once per process) a thread
that notices the new parent: it sets ``cancelled`` (ansible-runner's cancel callback), stops every
descendant process (Ansible's workers sit in sessions of their own, so a process-group kill misses
them) and ends the provider.
"""

from __future__ import annotations

import os
import sys
import threading
import time

__all__ = ["cancelled", "say", "watch"]

POLL_S = 0.5
EXIT_AFTER_S = 15.0
_CANCEL = threading.Event()
_started = threading.Lock()
_watching = False


def cancelled() -> bool:
    return _CANCEL.is_set()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_S)
    try:
        _CANCEL.set()  # ansible-runner's cancel callback: it stops the playbook's process group
        say(f"the engine (pid {parent}) is gone; stopping this provider's work")
        from clusterforge.ops.proctree import stop_tree

        # Ansible's forked workers run in sessions of their own: stop every descendant by parentage.
        stop_tree(grace=EXIT_AFTER_S / 3)
    finally:
        os._exit(130)


def watch() -> None:
    """Start watching (once per process); orphans of our children re-parent to us so they can be stopped."""
    global _watching
    with _started:
        if _watching:
            return
        _watching = True
    from clusterforge.ops.proctree import become_subreaper

    become_subreaper()
    threading.Thread(target=_watch, args=(os.getppid(),), name="cf-lifeline", daemon=True).start()


def say(line: str) -> None:
    """A line on the provider's stderr: the engine shows it in the run's output as it arrives."""
    try:
        sys.stderr.write(line.rstrip("\n") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # the engine is gone: nobody reads this pipe any more
