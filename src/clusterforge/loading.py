"""The edge between files and the pure core: load + plan, turning every failure into file:line problems."""

from __future__ import annotations

from pathlib import Path

from clusterforge.model import ClusterSpec, DeclarationError, SourceMap, load_cluster
from clusterforge.plan import Plan, PlanError, plan_cluster

__all__ = ["load_and_plan", "DeclarationError"]


def load_and_plan(path: str | Path) -> tuple[ClusterSpec, Plan, SourceMap]:
    spec, source = load_cluster(path)
    try:
        plan = plan_cluster(spec)
    except PlanError as exc:
        raise DeclarationError([source.problem(loc, message) for loc, message in exc.problems]) from None
    return spec, plan, source
