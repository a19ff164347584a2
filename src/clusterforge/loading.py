"""The edge between files and the pure core: load + plan + fabric checks, every failure as file:line problems.

Every command goes through load_and_plan, so a declaration that `validate` refuses is refused by
plan, render, report, diff, lab and preview/up alike.
"""

from __future__ import annotations

from pathlib import Path

from clusterforge.model import PLANES, ClusterSpec, DeclarationError, Loc, SourceMap, load_cluster
from clusterforge.plan import Plan, PlanError, plan_cluster

__all__ = ["load_and_plan", "DeclarationError", "fabric_loc"]


def fabric_loc(message: str) -> Loc:
    """The declared field a fabric-check sentence is about: the plane's oversubscription, the plane, or networks."""
    first = message.split(" ", 1)[0]
    if first in PLANES:
        return ("networks", first, "oversubscription")
    for plane in PLANES:
        if f"({plane})" in message or f"the {plane} plane" in message or f" on {plane}" in message:
            return ("networks", plane)
    return ("networks",)


def load_and_plan(path: str | Path) -> tuple[ClusterSpec, Plan, SourceMap]:
    from clusterforge.plan.fabric_checks import check_fabric

    spec, source = load_cluster(path)
    try:
        plan = plan_cluster(spec)
    except PlanError as exc:
        raise DeclarationError([source.problem(loc, message) for loc, message in exc.problems]) from None
    from clusterforge.render.switches._sonic.checks import sonic_declaration_problems

    sonic = sonic_declaration_problems(spec, plan)  # port speeds and lossless headroom the HWSKU allows
    if sonic:
        raise DeclarationError([source.problem(loc, message) for loc, message in sonic])
    problems = check_fabric(plan)
    if problems:
        raise DeclarationError([source.problem(fabric_loc(message), f"fabric: {message}") for message in problems])
    return spec, plan, source
