"""The scheduler drivers: one SchedulerDriver per model.slurm.SCHEDULERS value, each in its own package
here, registered once in SCHEDULERS.

The commands that change or check nodes (`replace`, `roll`, `verify`) iterate `declared(plan)` and ask
each driver; none of them names a scheduler. A new scheduler is its own package here and one entry in
SCHEDULERS (and its name in the declaration's schema).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from clusterforge.plan import Plan
from clusterforge.schedulers.driver import (
    Application,
    Drained,
    DrainRefused,
    LayerChecks,
    NodeControl,
    Queue,
    Reach,
    Rendering,
    SchedulerDriver,
    Unreachable,
)
from clusterforge.schedulers.kubernetes import KUBERNETES
from clusterforge.schedulers.nodes import ResumeFailed, drain_nodes, rejoin_node, resume_nodes
from clusterforge.schedulers.slurm import SLURM

__all__ = ["SCHEDULERS", "Application", "DrainRefused", "Drained", "LayerChecks", "NodeControl", "Queue", "Reach",
           "Rendering", "ResumeFailed", "SchedulerDriver", "Unreachable", "controls", "declared", "drain_nodes",
           "driver_for", "rejoin_node", "resume_nodes"]

SCHEDULERS: Mapping[str, SchedulerDriver] = MappingProxyType({d.name: d for d in (KUBERNETES, SLURM)})


def driver_for(name: str, table: Mapping[str, SchedulerDriver] = SCHEDULERS) -> SchedulerDriver:
    try:
        return table[name]
    except KeyError:
        raise ValueError(f"unknown scheduler {name!r} (known: {', '.join(table)})") from None


def declared(plan: Plan, table: Mapping[str, SchedulerDriver] = SCHEDULERS) -> tuple[SchedulerDriver, ...]:
    """The drivers of the plan's schedulers, in the registry's order."""
    return tuple(driver for name, driver in table.items() if name in plan.schedulers)


def controls(reach: Reach, table: Mapping[str, SchedulerDriver] = SCHEDULERS) -> tuple[NodeControl, ...]:
    """The live schedulers this run changes nodes through, in the registry's order. Every driver is asked
    (one that is not declared refuses a setting meant for it, Unreachable with usage). Raises Unreachable."""
    return tuple(c for c in (driver.control(reach) for driver in table.values()) if c is not None)
