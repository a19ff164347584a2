"""Slurm nodes drained, re-converged and resumed through the controller (clusterforge.ops.slurm_drain):
running jobs are waited for, never cancelled."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clusterforge.ops.slurm_drain import SlurmDrainBlocked, drain_node, resume_node
from clusterforge.schedulers.driver import Drained, DrainRefused, Say
from clusterforge.schedulers.slurm.remote import Runner, converge_node, stack_munge_key
from clusterforge.targets import Reach

__all__ = ["SlurmControl"]

NAME = "slurm"


@dataclass(frozen=True)
class SlurmControl:
    run: Runner  # commands on the primary controller
    nodes: frozenset[str]  # the plan's Slurm nodes
    target: Reach
    ssh_config: Path | None
    stack: str  # where the MUNGE key of a replaced machine comes from
    scheduler: str = NAME

    def manages(self, node: str) -> bool:
        return node in self.nodes

    def drain(self, node: str, reason: str, timeout_s: float, say: Say) -> Drained:
        try:
            drained = drain_node(self.run, node, reason, timeout_s, say=say)
        except SlurmDrainBlocked as exc:
            raise DrainRefused(NAME, node, str(exc), "the node stays drained in Slurm") from None
        return Drained(NAME, node, f"{len(drained.jobs_waited_for)} job(s) waited for")

    def rejoin(self, node: str, rendered: Path, private: Path, say: Say) -> str | None:
        """slurmd on the new machine with the stack's MUNGE key; on failure the node stays drained."""
        try:
            key = stack_munge_key(self.stack)
        except Exception as exc:  # the engine or the stack is missing: reported, not a traceback
            key, why = None, f"stack {self.stack}: {exc}"
        else:
            why = f"stack {self.stack} has no MUNGE key (`clusterforge up` has not applied Slurm)"
        if key is None:
            return f"slurm: not converged: {why}; the node stays drained (run `clusterforge up`, then resume it)"
        result = converge_node(rendered, private, node, key, self.target, self.ssh_config,
                               say=lambda line: say(f"provision {line}"))
        if not result.ok:
            return f"slurm: playbooks/slurm.yml failed ({result.status}); the node stays drained"
        return None

    def resume(self, node: str) -> str:
        return f"resumed ({resume_node(self.run, node)})"
