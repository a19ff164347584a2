"""Which Pulumi stacks hold a cluster: one, or (``state: {split: su}``) a site stack, one per SU and services.

A pure function of the Plan. Split by SU, the parts and what each declares are:

  site       networks, the lab and its images (lab target), bare-metal installs, the site racks (spines,
             aggregation, storage), fabric-wide files, the storage servers' provisioning and checks
  suNN       one per scalable unit: its racks (PDUs, servers, switches and their configs), its provisioning
             and host checks; reads the site stack's outputs (``reads``); no lock shared with another SU
  services   Kubernetes, Slurm and monitoring, where the plan has any: they span every SU, so this stack
             reads the site stack and every SU stack, and is applied after them

Each part is its own stack, ``<base>-<part>`` (``lab-site``, ``lab-su01``), so each has its own lock: two
SU stacks apply side by side. ``waves`` is the order for applying everything: site, then the SUs together,
then services. A new SU in the declaration is a new part, so a new stack; the site stack changes with it
only where the site's own devices change (the spines' ports towards the new leaves).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from clusterforge.plan.objects import Plan
from clusterforge.vocab import DeviceKind

__all__ = ["SITE", "SERVICES", "WHOLE", "StackPart", "StackSplit", "part_stack", "split_stacks", "su_part"]

SITE = "site"
SERVICES = "services"
WHOLE = "all"  # the one part of an unsplit cluster
PartKind = Literal["all", "site", "su", "services"]


def su_part(su: int) -> str:
    return f"su{su:02d}"


def part_stack(base: str, part: str) -> str:
    """The stack that holds ``part`` of the cluster whose stacks are named after ``base``."""
    return base if part == WHOLE else f"{base}-{part}"


@dataclass(frozen=True)
class StackPart:
    name: str  # all, site, su01, ..., services
    kind: PartKind
    su: int | None = None
    racks: tuple[str, ...] = ()  # the racks whose resources this part declares
    hosts: tuple[str, ...] = ()  # the hosts it provisions (an SU's servers; the storage servers)
    reads: tuple[str, ...] = ()  # parts whose outputs it reads: applied before it


@dataclass(frozen=True)
class StackSplit:
    mode: str  # none | su, as declared
    parts: tuple[StackPart, ...]

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parts)

    def part(self, name: str) -> StackPart:
        for part in self.parts:
            if part.name == name:
                return part
        raise KeyError(name)

    def waves(self) -> tuple[tuple[StackPart, ...], ...]:
        """Parts in apply order; the parts of one wave read none of each other and apply side by side."""
        done: set[str] = set()
        left = list(self.parts)
        waves: list[tuple[StackPart, ...]] = []
        while left:
            ready = tuple(p for p in left if set(p.reads) <= done)
            if not ready:
                raise ValueError(f"parts read each other in a cycle: {[p.name for p in left]}")
            waves.append(ready)
            done.update(p.name for p in ready)
            left = [p for p in left if p.name not in done]
        return tuple(waves)


def _has_services(plan: Plan) -> bool:
    return plan.kubernetes is not None or plan.slurm is not None or plan.monitoring is not None


def split_stacks(plan: Plan, mode: str | None = None) -> StackSplit:
    """The stacks holding ``plan`` under ``mode`` (default: the plan's declared state.split)."""
    mode = mode or plan.state_split
    if mode == "none":
        return StackSplit(mode, (StackPart(WHOLE, "all", racks=tuple(r.name for r in plan.racks)),))
    if mode != "su":
        raise ValueError(f"state.split {mode!r}: expected none or su")
    storage = tuple(d.name for d in plan.devices if d.kind == DeviceKind.STORAGE)
    site = StackPart(SITE, "site", racks=tuple(r.name for r in plan.racks if r.su is None), hosts=storage)
    units: list[StackPart] = []
    for su in sorted({r.su for r in plan.racks if r.su is not None}):
        racks = tuple(r.name for r in plan.racks if r.su == su)
        servers = tuple(d.name for d in plan.devices if d.rack in racks and d.kind in DeviceKind.HOSTS)
        units.append(StackPart(su_part(su), "su", su=su, racks=racks, hosts=servers, reads=(SITE,)))
    parts = [site, *units]
    if _has_services(plan):
        parts.append(StackPart(SERVICES, "services", reads=(SITE, *(u.name for u in units))))
    return StackSplit(mode, tuple(parts))
