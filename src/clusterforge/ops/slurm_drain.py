"""Drain a Slurm node before it is changed and resume it after its health gate, through scontrol on the
controller.

`scontrol update NodeName=<node> State=DRAIN Reason=<reason>` lets the node's running jobs finish and
starts no new one there; the drain is done when the node runs no job (scontrol reports IDLE+DRAIN, sinfo
"drained"). A job still running at the timeout stops the drain: the node stays drained and the jobs are
named, never cancelled. `resume` is `State=RESUME`. `run(command)` runs a shell command on the controller
and returns (exit status, stdout, stderr) (clusterforge.schedulers.slurm.remote.controller_runner); node names have
passed the declaration's grammar and reach the shell through shlex.quote. This module imports nothing of
clusterforge.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["SlurmDrainBlocked", "SlurmDrainResult", "drain_node", "resume_node", "node_state"]

Runner = Callable[[str], tuple[int, str, str]]
BUSY = ("ALLOCATED", "MIXED", "COMPLETING")


class SlurmDrainBlocked(RuntimeError):
    def __init__(self, node: str, jobs: list[str], why: str = "") -> None:
        self.node, self.jobs = node, jobs
        what = f"jobs still running: {', '.join(jobs)}" if jobs else why
        super().__init__(f"draining {node} in Slurm is blocked: {what}")


@dataclass(frozen=True)
class SlurmDrainResult:
    node: str
    waited_s: float
    jobs_waited_for: tuple[str, ...]


def node_state(run: Runner, node: str) -> str | None:
    """scontrol's State of the node (IDLE, IDLE+DRAIN, MIXED+DRAIN, DOWN+NOT_RESPONDING, ...), None if unknown."""
    rc, stdout, _ = run(f"scontrol --oneliner show node {shlex.quote(node)}")
    if rc != 0:
        return None
    for word in stdout.split():
        if word.startswith("State="):
            return word.removeprefix("State=")
    return None


def _jobs_on(run: Runner, node: str) -> list[str]:
    rc, stdout, _ = run(f"squeue --noheader --states=RUNNING,COMPLETING --nodelist={shlex.quote(node)} --format=%i")
    return stdout.split() if rc == 0 else []


def drain_node(run: Runner, node: str, reason: str, timeout_s: float = 600.0,
               say: Callable[[str], Any] = lambda _line: None) -> SlurmDrainResult:
    """Drain `node` and wait until it runs no job. Raises SlurmDrainBlocked (the node stays drained)."""
    rc, stdout, stderr = run(f"scontrol update NodeName={shlex.quote(node)} State=DRAIN Reason={shlex.quote(reason)}")
    if rc != 0:
        raise SlurmDrainBlocked(node, [], f"scontrol update failed: {(stderr or stdout).strip()[:300]}")
    say(f"{node}: State=DRAIN (reason {reason!r})")
    started = time.monotonic()
    waited: set[str] = set()
    while True:
        state = node_state(run, node) or "?"
        jobs = _jobs_on(run, node)
        waited.update(jobs)
        flags = state.split("+")
        if "DRAIN" in flags and not jobs and not any(flag in BUSY for flag in flags):
            return SlurmDrainResult(node, time.monotonic() - started, tuple(sorted(waited)))
        if time.monotonic() - started > timeout_s:
            raise SlurmDrainBlocked(node, jobs, f"state {state} after {timeout_s:.0f} s")
        if jobs:
            say(f"{node}: waiting for job(s) {', '.join(jobs)}")
        time.sleep(2)


UNSETTLED = ("DRAIN", "NOT_RESPONDING", "COMPLETING")


def resume_node(run: Runner, node: str, settle_s: float = 120.0) -> str:
    """Make the node schedulable again; returns its state once it has settled (no DRAIN, NOT_RESPONDING or
    COMPLETING flag; seen on the lab: IDLE+NOT_RESPONDING for a moment after a job), or the last one seen
    after `settle_s`."""
    rc, stdout, stderr = run(f"scontrol update NodeName={shlex.quote(node)} State=RESUME")
    if rc != 0 and "Invalid node state transition" not in (stderr + stdout):  # already schedulable
        raise RuntimeError(f"resuming {node} in Slurm failed: {(stderr or stdout).strip()[:300]}")
    deadline = time.monotonic() + settle_s
    while True:
        state = node_state(run, node) or "?"
        if not any(flag in UNSETTLED for flag in state.split("+")) or time.monotonic() >= deadline:
            return state
        time.sleep(1)
