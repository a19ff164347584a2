"""SchedulerDriver: what the commands need of a workload scheduler, as one typed record per scheduler.

A driver says what the scheduler renders (a directory of the rendered tree and the function that writes it),
how it is applied (its playbook, its roles and the Pulumi component of its step), the checks that verify
the live scheduler, how a node leaves it before a change and rejoins it after its health gate, and the
queues and quotas it enforces. `replace`, `roll` and `verify` ask the drivers of the declared schedulers
(clusterforge.schedulers.declared) and never name a scheduler; the work itself stays in the modules a
driver delegates to (render/slurm, ops/drain, ops/slurm_drain, verify/kube_checks, verify/slurm_checks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from clusterforge.plan import Plan
from clusterforge.targets import Reach as HostReach
from clusterforge.verify.layer_check import LayerCheck

__all__ = ["Application", "DrainRefused", "Drained", "LayerChecks", "NodeControl", "Queue", "Reach", "Rendering",
           "SchedulerDriver", "Say", "Unreachable"]

Say = Callable[[str], Any]


@dataclass(frozen=True, slots=True)
class Rendering:
    """The scheduler's own files: `files(plan)` by their path under `directory` of the rendered tree; and
    `host_var`, the Ansible variable of the control nodes' host_vars its roles are built from."""

    directory: str
    files: Callable[[Plan], Mapping[str, str]]
    host_var: str


@dataclass(frozen=True, slots=True)
class Application:
    """How the scheduler is applied: the playbook (under playbooks/) of its stack step, the roles those
    playbooks run and the Pulumi type token of the component that declares the step; `more_playbooks`: the
    step's later playbooks (Kubernetes: the nodes joining after the control plane)."""

    playbook: str
    roles: tuple[str, ...]
    component: str
    more_playbooks: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Queue:
    """A place work waits in and the GPU limit it enforces: a partition, an account's limit, a namespace's
    ResourceQuota. `gpus` None: no GPU limit of its own; `nodes` empty: not bound to nodes."""

    name: str
    kind: str
    gpus: int | None
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Reach:
    """How a command reaches the live schedulers: the plan, the delivery target and its SSH config, an explicit
    kubeconfig, the stack named on the command line (`stack`, None when none was) and the stack a command
    reads secrets from when none was named (`default_stack`, the inventory's stem). `skip`: drivers the
    operator turned off for this run (by name)."""

    plan: Plan
    target: HostReach
    ssh_config: Path | None = None
    kubeconfig: Path | None = None
    stack: str | None = None
    default_stack: str = ""
    skip: frozenset[str] = frozenset()

    @property
    def secrets_stack(self) -> str:
        return self.stack or self.default_stack


@dataclass(frozen=True, slots=True)
class Drained:
    scheduler: str
    node: str
    summary: str  # what the drain did, for the progress line: "3 pod(s) evicted, 1 DaemonSet pod(s) left"


class DrainRefused(RuntimeError):
    """A node could not be drained; `held` says the state it is left in ("the node stays cordoned")."""

    def __init__(self, scheduler: str, node: str, why: str, held: str) -> None:
        self.scheduler, self.node, self.held = scheduler, node, held
        super().__init__(why)


class Unreachable(RuntimeError):
    """The scheduler was asked for and cannot be reached (exit 3), or was asked for wrongly (`usage`, exit 2)."""

    def __init__(self, why: str, usage: bool = False) -> None:
        self.usage = usage
        super().__init__(why)


class NodeControl(Protocol):
    """A live scheduler a command changes nodes through, opened by SchedulerDriver.control."""

    @property
    def scheduler(self) -> str:
        """The driver's name."""

    def manages(self, node: str) -> bool:
        """The node is one of the scheduler's: it is drained before a change and resumed after."""

    def drain(self, node: str, reason: str, timeout_s: float, say: Say) -> Drained:
        """Take no new work on the node and wait until its work is gone. Raises DrainRefused."""

    def rejoin(self, node: str, rendered: Path, private: Path, say: Say) -> str | None:
        """After a replaced machine passed its health gate: put the scheduler's own parts back on it (the
        rendered tree at `rendered`, a private scratch directory). Returns the problem, None when done."""

    def resume(self, node: str) -> str:
        """Make the node schedulable again; returns what it is now ("uncordoned"). Raises RuntimeError."""


@dataclass(frozen=True)
class LayerChecks:
    """The checks of a live scheduler: `checks` None when they could not run, and `why`; the title of their
    table and the facts a reader of the JSON report must know beside them (Slurm's simulated GPUs)."""

    checks: tuple[LayerCheck, ...] | None
    why: str = ""
    title: str = ""
    facts: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.checks is not None and all(c.ok for c in self.checks)


@dataclass(frozen=True, slots=True)
class SchedulerDriver:
    name: str  # a model.slurm.SCHEDULERS value, as declared under `schedulers:`
    label: str  # how people write it (messages)
    rendering: Rendering
    application: Application
    queues: Callable[[Plan], tuple[Queue, ...]]
    # None: the command does not change nodes through this scheduler (not asked to, or nothing to change)
    control: Callable[[Reach], NodeControl | None]
    # None: this run does not check the scheduler (not asked to, or the declaration gives it nothing to run on)
    checks: Callable[[Reach], LayerChecks | None]
    # what a command line gives for this run to reach the scheduler's nodes (said when a run does not)
    reached_by: str = ""
