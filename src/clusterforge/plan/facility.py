"""Racks and power: placement at fixed U positions, A/B feeds, power, cooling, weight, phases.

Placement is a pure function of stable ids: server slot k of rack r sits at U 1 + (k - 1) x height;
ToR switches take the reserved top U; switches in network and site racks fill racks in ordinal order.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from clusterforge.model import ClusterSpec
from clusterforge.model.cluster import Loc
from clusterforge.plan.naming import asset_id, pdu_name
from clusterforge.plan.objects import Device, Pdu, Rack
from clusterforge.vocab import DeviceKind

__all__ = ["RackBudget", "rack_budget", "series_position", "psu_feeds", "plan_racks"]


@dataclass(frozen=True)
class RackBudget:
    capacity_w: float  # what one feed side can carry (the rack must run on either alone)
    budget_w: float  # capacity less headroom
    usable_u: int
    outlets: int  # per feed side


def rack_budget(spec: ClusterSpec) -> RackBudget:
    fac = spec.site.facility
    side = fac.feed.capacity_w
    capacity = min(fac.rack_power_limit_w, side)
    outlets = spec.catalog.pdus[fac.pdu_model].outlets
    return RackBudget(capacity, capacity * (1 - fac.headroom), fac.rack_u - fac.reserved_top_u, outlets)


def series_position(ordinal: int, height_u: int, draw_w: float, budget: RackBudget) -> tuple[int, int]:
    """(rack number from 1, U) of the ordinal-th device in a rack series of identical devices."""
    by_space = budget.usable_u // height_u
    by_power = int(budget.budget_w // draw_w) if draw_w else by_space
    per_rack = max(1, min(by_space, by_power, budget.outlets))
    return ordinal // per_rack + 1, 1 + (ordinal % per_rack) * height_u


def psu_feeds(count: int) -> tuple[str, ...]:
    """PSUs alternate A, B, A, B...: both feeds always present when there are two or more PSUs."""
    return tuple("AB"[i % 2] for i in range(count))


def _phase_loads(devices: list[Device], phases: int) -> list[float]:
    """One feed side's outlets: each PSU outlet goes to the least-loaded phase, in device order."""
    loads = [0.0] * phases
    for device in devices:
        outlets = max(1, len(device.psu_feeds) // 2)
        for _ in range(outlets):
            phase = loads.index(min(loads))
            loads[phase] += device.power_w / outlets
    return loads


def plan_racks(
    spec: ClusterSpec,
    devices: list[Device],
    rack_meta: dict[str, tuple[int | None, int, str, Loc]],
    pdu_ip: dict[str, str | None],
) -> tuple[list[Rack], list[Pdu], list[tuple[Loc, str]], list[str]]:
    """Aggregate placed devices per rack and check every facility limit.

    rack_meta: rack name -> (su, index, role, loc of the declaration that sized it).
    """
    fac = spec.site.facility
    budget = rack_budget(spec)
    pdu_model = spec.catalog.pdus[fac.pdu_model]
    by_rack: dict[str, list[Device]] = defaultdict(list)
    for device in devices:
        if device.rack:
            by_rack[device.rack].append(device)
    racks: list[Rack] = []
    pdus: list[Pdu] = []
    problems: list[tuple[Loc, str]] = []
    warnings: list[str] = []
    for name in sorted(by_rack):
        members = by_rack[name]
        su, index, role, loc = rack_meta[name][:4]
        power = sum(d.power_w for d in members)
        used_u = sum(d.height_u for d in members)
        pdu_weight = 2 * pdu_model.weight_kg
        weight = fac.rack_empty_weight_kg + pdu_weight + sum(d.weight_kg for d in members)
        floor = weight / fac.rack_footprint_m2
        if power > budget.budget_w:
            problems.append((loc, f"rack {name}: {power:,.0f} W exceeds its budget {budget.budget_w:,.0f} W"
                             f" ({budget.capacity_w:,.0f} W per feed less {fac.headroom:.0%} headroom)"
                             f" by {power - budget.budget_w:,.0f} W"))
        if weight > fac.rack_max_weight_kg:
            problems.append((loc, f"rack {name}: {weight:,.0f} kg exceeds the rack limit"
                             f" {fac.rack_max_weight_kg:,.0f} kg by {weight - fac.rack_max_weight_kg:,.0f} kg"))
        if floor > fac.floor_load_kg_m2:
            problems.append((loc, f"rack {name}: {floor:,.0f} kg/m2 exceeds the floor load"
                             f" {fac.floor_load_kg_m2:,.0f} kg/m2"))
        cooling = "air"
        if power > fac.cooling.air_limit_w:
            cooling = "liquid"
            if not fac.cooling.liquid:
                problems.append((loc, f"rack {name}: {power:,.0f} W exceeds the air-cooling limit"
                                 f" {fac.cooling.air_limit_w:,.0f} W and the site declares no liquid cooling"))
            elif power > fac.cooling.liquid_limit_w:
                problems.append((loc, f"rack {name}: {power:,.0f} W exceeds the liquid-cooling limit"
                                 f" {fac.cooling.liquid_limit_w:,.0f} W"))
        outlets_per_side = sum(max(1, len(d.psu_feeds) // 2) for d in members)
        if outlets_per_side > pdu_model.outlets:
            problems.append((loc, f"rack {name}: {outlets_per_side} PSUs per feed exceed the"
                             f" {pdu_model.outlets} outlets of {fac.pdu_model}"))
        for device in members:
            if device.kind == DeviceKind.SERVER and set(device.psu_feeds) != {"A", "B"}:
                problems.append((loc, f"{device.name}: PSUs do not reach both feeds"))
        phases = fac.feed.phases
        loads = _phase_loads(members, phases)
        mean = sum(loads) / phases if phases else 0
        imbalance = (max(loads) - min(loads)) / mean * 100 if mean and phases > 1 else 0.0
        names = []
        for feed in ("A", "B") if fac.redundancy == "A/B" else ("A",):
            pdu = pdu_name(name, feed)
            names.append(pdu)
            pdus.append(Pdu(pdu, name, feed, fac.pdu_model, budget.capacity_w, pdu_model.outlets,
                            outlets_per_side, power, tuple(loads), pdu_ip.get(pdu),
                            asset_id(spec.site.name, pdu)))
        racks.append(Rack(name, su, index, role, power, budget.capacity_w, budget.budget_w, cooling, weight,
                          floor, used_u, fac.rack_u, tuple(("A", "B") if fac.redundancy == "A/B" else ("A",)),
                          tuple(names), imbalance))
        if used_u > fac.rack_u:
            problems.append((loc, f"rack {name}: {used_u} U of devices exceed {fac.rack_u} U"))
        per_phase = budget.capacity_w / phases
        if phases > 1 and max(loads) > per_phase:
            warnings.append(f"rack {name}: one phase carries {max(loads):,.0f} W of its {per_phase:,.0f} W share"
                            f" (imbalance {imbalance:.0f} %)")
    return racks, pdus, problems, warnings


def server_feed_warning(model_name: str, psu_count: int, rating_w: float, max_draw_w: float) -> str | None:
    per_side = math.ceil(psu_count / 2)
    if per_side * rating_w < max_draw_w:
        return (f"server model {model_name}: {per_side} PSUs x {rating_w:.0f} W on one feed carry"
                f" {per_side * rating_w:,.0f} W < {max_draw_w:,.0f} W max draw; a feed loss caps the server")
    return None
