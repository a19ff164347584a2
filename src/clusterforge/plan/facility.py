"""Racks and power: placement at fixed U positions, A/B feeds, PDUs, power, cooling, weight, phases.

Each rack side gets as many PDUs (each on its own feed circuit, within the PDU's rating) as its load
needs with the headroom and as its PSUs need outlets, up to site.facility.pdus_per_side; the first
pair keeps the plain names (su01-r02-pdu-a/-b), further pairs are -pdu-a2/-b2, ...

Placement is a pure function of stable ids: server slot k of rack r sits at U 1 + (k - 1) x height;
ToR switches take the reserved top U; switches in network and site racks fill racks in ordinal order.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from clusterforge.model import ClusterSpec
from clusterforge.model.cluster import Loc
from clusterforge.plan.naming import RackMeta, asset_id, pdu_name
from clusterforge.plan.objects import Device, Pdu, Rack
from clusterforge.vocab import DeviceKind

__all__ = ["RackBudget", "rack_budget", "series_position", "psu_feeds", "pairs_needed", "spread_outlets", "plan_racks"]


@dataclass(frozen=True)
class RackBudget:
    capacity_w: float  # what one feed side can carry with all its PDUs (the rack must run on either side alone)
    budget_w: float  # capacity less headroom
    usable_u: int
    outlets: int  # per feed side, all its PDUs
    circuit_w: float  # what one PDU's feed circuit can carry (min with the rack limit)
    pdus_per_side: int  # the most PDUs one side may get


def rack_budget(spec: ClusterSpec) -> RackBudget:
    fac = spec.site.facility
    pairs = fac.pdus_per_side
    circuit = min(fac.rack_power_limit_w, fac.feed.capacity_w)
    capacity = min(fac.rack_power_limit_w, pairs * fac.feed.capacity_w)
    outlets = spec.catalog.pdus[fac.pdu_model].outlets * pairs
    return RackBudget(capacity, capacity * (1 - fac.headroom), fac.rack_u - fac.reserved_top_u, outlets, circuit,
                      pairs)


def series_position(ordinal: int, height_u: int, draw_w: float, budget: RackBudget) -> tuple[int, int]:
    """(rack number from 1, U) of the ordinal-th device in a rack series of identical devices."""
    by_space = budget.usable_u // height_u
    by_power = int(budget.budget_w // draw_w) if draw_w else by_space
    per_rack = max(1, min(by_space, by_power, budget.outlets))
    return ordinal // per_rack + 1, 1 + (ordinal % per_rack) * height_u


def psu_feeds(count: int) -> tuple[str, ...]:
    """PSUs alternate A, B, A, B...: both feeds always present when there are two or more PSUs."""
    return tuple("AB"[i % 2] for i in range(count))


def pairs_needed(power_w: float, outlets_per_side: int, budget: RackBudget, headroom: float, outlets: int) -> int:
    """PDUs per side a rack needs: enough circuits for its load with the headroom, and enough outlets;
    at least one, at most the declared pdus_per_side (beyond that the rack's budget check refuses it)."""
    per_circuit = budget.circuit_w * (1 - headroom)
    by_power = math.ceil(power_w / per_circuit) if per_circuit > 0 else budget.pdus_per_side
    by_outlets = math.ceil(outlets_per_side / outlets)
    return max(1, min(budget.pdus_per_side, max(by_power, by_outlets)))


@dataclass
class _Side:
    """One feed side's PDUs as they fill: per PDU its load, outlets used and per-phase load."""

    load: list[float]
    used: list[int]
    phases: list[list[float]]
    outlets: dict[str, list[int]]  # device name -> the PDU (0-based pair) of each of its PSUs on this side


def spread_outlets(devices: list[Device], pdus: int, phases: int, outlets: int) -> _Side:
    """One feed side: each PSU outlet goes to the least-loaded PDU that has a free outlet (the least
    loaded of all when none has), then to that PDU's least-loaded phase, in device order. A device's
    PSUs on a side thus spread across the side's PDUs."""
    side = _Side([0.0] * pdus, [0] * pdus, [[0.0] * phases for _ in range(pdus)], {})
    for device in devices:
        count = max(1, len(device.psu_feeds) // 2)
        for _ in range(count):
            free = [i for i in range(pdus) if side.used[i] < outlets] or list(range(pdus))
            pdu = min(free, key=lambda i: (side.load[i], i))
            loads = side.phases[pdu]
            phase = loads.index(min(loads))
            loads[phase] += device.power_w / count
            side.load[pdu] += device.power_w / count
            side.used[pdu] += 1
            side.outlets.setdefault(device.name, []).append(pdu)
    return side


def _imbalance(loads: list[float]) -> float:
    mean = sum(loads) / len(loads) if loads else 0
    return (max(loads) - min(loads)) / mean * 100 if mean and len(loads) > 1 else 0.0


def _budget_loc(loc: Loc, role: str, feed_bound: bool) -> Loc:
    """Where a rack over its power budget is refused: a compute rack at the SU that filled it; a network or
    site rack (sized by no one field) at what bounds its budget, the feed circuits or the rack limit."""
    if role == "compute":
        return loc
    if feed_bound:
        return ("site", "facility", "feed", "max_utilisation")
    return ("site", "facility", "rack_power_limit_w")


def _physical_limits(spec: ClusterSpec, name: str, loc: Loc, members: list[Device], power: float, weight: float,
                     floor: float, outlets_per_side: int, pairs: int) -> tuple[str, list[tuple[Loc, str]]]:
    """The rack's weight, floor load, cooling, outlets and PSU feeds against the site: its cooling (air or
    liquid) and what exceeds a limit."""
    fac = spec.site.facility
    problems: list[tuple[Loc, str]] = []
    pdu_model = spec.catalog.pdus[fac.pdu_model]
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
    if outlets_per_side > pdu_model.outlets * pairs:
        problems.append((loc, f"rack {name}: {outlets_per_side} PSUs per feed exceed the"
                         f" {pdu_model.outlets * pairs} outlets of {pairs} x {fac.pdu_model}"))
    for device in members:
        if device.kind == DeviceKind.SERVER and set(device.psu_feeds) != {"A", "B"}:
            problems.append((loc, f"{device.name}: PSUs do not reach both feeds"))
    return cooling, problems


def plan_racks(
    spec: ClusterSpec,
    devices: list[Device],
    rack_meta: dict[str, RackMeta],
    pdu_ip: dict[str, str | None],
    trays: dict[str, tuple[float, float, int]] | None = None,
) -> tuple[list[Rack], list[Pdu], list[tuple[Loc, str]], list[str]]:
    """Aggregate placed devices per rack, place its PDUs (pairs_needed per side) and check every facility limit.

    rack_meta: rack name -> (su, index, role, loc of the declaration that sized it).
    trays: rack name -> (W, kg, U) of a rack-scale system's trays that are not hosts (plan.rackscale).
    """
    trays = trays or {}
    fac = spec.site.facility
    budget = rack_budget(spec)
    pdu_model = spec.catalog.pdus[fac.pdu_model]
    sides = ("A", "B") if fac.redundancy == "A/B" else ("A",)
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
        tray_w, tray_kg, tray_u = trays.get(name, (0.0, 0.0, 0))
        power = sum(d.power_w for d in members) + tray_w
        used_u = sum(d.height_u for d in members) + tray_u
        outlets_per_side = sum(max(1, len(d.psu_feeds) // 2) for d in members)
        pairs = pairs_needed(power, outlets_per_side, budget, fac.headroom, pdu_model.outlets)
        capacity = min(fac.rack_power_limit_w, pairs * fac.feed.capacity_w)
        budget_w = capacity * (1 - fac.headroom)
        weight = (fac.rack_empty_weight_kg + 2 * pairs * pdu_model.weight_kg + sum(d.weight_kg for d in members)
                  + tray_kg)
        floor = weight / fac.rack_footprint_m2
        if power > budget_w:
            problems.append((_budget_loc(loc, role, pairs * fac.feed.capacity_w < fac.rack_power_limit_w),
                             f"rack {name}: {power:,.0f} W exceeds its budget {budget_w:,.0f} W"
                             f" ({capacity:,.0f} W per feed side on {pairs} PDU circuit(s) less {fac.headroom:.0%}"
                             f" headroom) by {power - budget_w:,.0f} W"))
        cooling, exceeded = _physical_limits(spec, name, loc, members, power, weight, floor, outlets_per_side, pairs)
        problems += exceeded
        phases = fac.feed.phases
        side = spread_outlets(members, pairs, phases, pdu_model.outlets)
        circuit = min(budget.circuit_w, capacity)
        for pair in range(pairs):
            if pairs > 1 and side.load[pair] > circuit:  # one pair: the rack budget above says it
                problems.append((loc, f"rack {name}: PDU {pdu_name(name, 'A', pair + 1)} carries"
                                 f" {side.load[pair]:,.0f} W when the other side fails, above its circuit's"
                                 f" {circuit:,.0f} W"))
        names = []
        for pair in range(pairs):
            load = power if pairs == 1 else side.load[pair]
            for feed in sides:
                pdu = pdu_name(name, feed, pair + 1)
                names.append(pdu)
                pdus.append(Pdu(pdu, name, feed, fac.pdu_model, circuit, pdu_model.outlets, side.used[pair], load,
                                tuple(side.phases[pair]), pdu_ip.get(pdu), asset_id(spec.site.name, pdu)))
        imbalance = max(_imbalance(loads) for loads in side.phases) if phases > 1 else 0.0
        racks.append(Rack(name, su, index, role, power, capacity, budget_w, cooling, weight,
                          floor, used_u, fac.rack_u, sides, tuple(names), imbalance))
        if used_u > fac.rack_u:
            problems.append((loc, f"rack {name}: {used_u} U of devices exceed {fac.rack_u} U"))
        per_phase = circuit / phases
        worst = max(range(pairs), key=lambda p: (max(side.phases[p]), -p))
        if phases > 1 and max(side.phases[worst]) > per_phase:
            warnings.append(f"rack {name}: one phase carries {max(side.phases[worst]):,.0f} W of its"
                            f" {per_phase:,.0f} W share (imbalance {_imbalance(side.phases[worst]):.0f} %)")
    return racks, pdus, problems, warnings


def server_feed_warning(model_name: str, psu_count: int, rating_w: float, max_draw_w: float) -> str | None:
    per_side = math.ceil(psu_count / 2)
    if per_side * rating_w < max_draw_w:
        return (f"server model {model_name}: {per_side} PSUs x {rating_w:.0f} W on one feed carry"
                f" {per_side * rating_w:,.0f} W < {max_draw_w:,.0f} W max draw; a feed loss caps the server")
    return None
