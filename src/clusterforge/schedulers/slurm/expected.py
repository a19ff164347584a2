"""What the plan asks of Slurm: whether it runs at all (`slurm_wanted`) and what a converged cluster's
slurmctld reports (`slurm_expected`, read by verify/slurm_checks)."""

from __future__ import annotations

from typing import Any

from clusterforge.plan import Plan

__all__ = ["slurm_expected", "slurm_wanted"]


def slurm_wanted(plan: Plan) -> bool:
    """The declaration asks for Slurm (the plan has a SlurmPlan) and a controller to run it."""
    return plan.slurm is not None and bool(plan.slurm.controllers) and bool(plan.slurm.nodes)


def slurm_expected(plan: Plan) -> dict[str, Any]:
    """What a converged cluster's slurmctld reports (plan/slurm.py): its nodes with their GPU counts, the
    switch tree or the NVLink blocks of the topology plugin the plan chose, the teams' GPU limits."""
    slurm = plan.slurm
    assert slurm is not None
    topology: dict[str, Any] = {"plugin": slurm.topology_plugin, "switches": [], "blocks": []}
    if slurm.topology_plugin == "topology/tree" and plan.scheduler is not None:
        topology["switches"] = [{"name": s.name, "nodes": list(s.nodes), "switches": list(s.switches)}
                                for s in plan.scheduler.tree]
    elif slurm.topology_plugin == "topology/block" and plan.scheduler is not None:
        topology["blocks"] = [{"name": b.name, "nodes": list(b.nodes)} for b in plan.scheduler.blocks]
    return {
        "nodes": [{"name": n.name, "gpus": n.gpus} for n in slurm.nodes],
        "topology": topology,
        "accounts": [{"name": a.name, "gpus": a.gpus} for a in slurm.accounts],
    }
