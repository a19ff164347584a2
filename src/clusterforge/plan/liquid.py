"""Liquid cooling as a constraint: each rack's heat split into liquid and air by the catalog's fractions,
each row's CDUs checked against its liquid heat and flow with the declared redundancy, and the CDUs,
manifolds and leak detection a bill of materials needs. A loop declared where no rack sends heat to liquid
is refused: nothing of it would be planned.

A row is one SU's compute racks (the racks one set of in-row CDUs serves). The liquid share of a
rack-scale rack is its rack system's `liquid_fraction` of the whole rack; elsewhere each server model's
`liquid_fraction` of its draw (0 for air-cooled models).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from clusterforge.model import ClusterSpec
from clusterforge.model.cluster import Loc
from clusterforge.plan.objects import Device, Rack

__all__ = ["RackHeat", "RowCooling", "CoolingPlan", "plan_cooling", "SPARE_CDUS"]

WATER_J_PER_KG_K = 4186.0  # 1 litre of water ~ 1 kg
SPARE_CDUS = {"N": lambda n: 0, "N+1": lambda n: 1, "N+2": lambda n: 2, "2N": lambda n: n // 2}


@dataclass(frozen=True)
class RackHeat:
    rack: str
    liquid_w: float
    air_w: float


@dataclass(frozen=True)
class RowCooling:
    row: str
    su: int
    racks: tuple[str, ...]
    liquid_w: float
    cdus: int
    usable_cdus: int
    capacity_w: float
    flow_needed_lpm: float
    flow_lpm: float

    @property
    def margin_w(self) -> float:
        return self.capacity_w - self.liquid_w


@dataclass(frozen=True)
class CoolingPlan:
    racks: tuple[RackHeat, ...]
    rows: tuple[RowCooling, ...]
    cdu_model: str | None
    liquid_w: float
    air_w: float
    blended_pue: float
    bom: tuple[tuple[str, str, int, float], ...]  # (kind, item, count, unit price)

    def to_dict(self) -> dict:
        return {"liquid_w": self.liquid_w, "air_w": self.air_w, "blended_pue": self.blended_pue,
                "cdu_model": self.cdu_model,
                "rows": [{"row": r.row, "racks": list(r.racks), "liquid_w": r.liquid_w, "cdus": r.cdus,
                          "usable_cdus": r.usable_cdus, "capacity_w": r.capacity_w, "margin_w": r.margin_w,
                          "flow_needed_lpm": r.flow_needed_lpm, "flow_lpm": r.flow_lpm} for r in self.rows]}


def _rack_heat(spec: ClusterSpec, racks: Iterable[Rack], devices: Iterable[Device]) -> list[RackHeat]:
    cat = spec.catalog
    systems = {}
    for unit in spec.scalable_units:
        if unit.rack_system:
            systems[unit.id] = cat.rack_systems[unit.rack_system]
    liquid: dict[str, float] = defaultdict(float)
    for device in devices:
        model = cat.servers.get(device.model)
        if device.rack and model is not None and device.su not in systems:
            liquid[device.rack] += device.power_w * model.liquid_fraction
    out = []
    for rack in racks:
        share = (rack.power_w * systems[rack.su].liquid_fraction if rack.su in systems and rack.role == "compute"
                 else liquid.get(rack.name, 0.0))
        out.append(RackHeat(rack.name, round(share, 1), round(rack.power_w - share, 1)))
    return out


def plan_cooling(spec: ClusterSpec, racks: list[Rack], devices: list[Device]
                 ) -> tuple[CoolingPlan, list[tuple[Loc, str]]]:
    fac = spec.site.facility
    loop = fac.cooling.liquid_loop
    where: Loc = ("site", "facility", "cooling", "liquid_loop")
    heat = _rack_heat(spec, racks, devices)
    problems: list[tuple[Loc, str]] = []
    liquid_racks = [h for h in heat if h.liquid_w > 0]
    rows: list[RowCooling] = []
    bom: list[tuple[str, str, int, float]] = []
    total_liquid = sum(h.liquid_w for h in heat)
    total_air = sum(h.air_w for h in heat)
    if liquid_racks and loop is None:
        worst = max(liquid_racks, key=lambda h: h.liquid_w)
        problems.append((("site", "facility", "cooling"), f"{len(liquid_racks)} rack(s) send heat to liquid (rack"
                         f" {worst.rack}: {worst.liquid_w:,.0f} W); declare cooling.liquid_loop (cdu_model,"
                         " cdus_per_row, redundancy, supply_temperature_c)"))
    if loop is not None and not liquid_racks:
        problems.append((where, "no rack sends heat to liquid (every server model's and rack system's"
                         " liquid_fraction is 0), so the loop and its CDUs are never planned; drop"
                         " cooling.liquid_loop, or use a liquid-cooled model"))
    if loop is not None and liquid_racks:
        cdu = spec.catalog.cdus.get(loop.cdu_model)
        if cdu is None:
            known = ", ".join(sorted(spec.catalog.cdus)) or "(none in the catalog)"
            problems.append(((*where, "cdu_model"), f"unknown CDU model {loop.cdu_model!r}; the catalog has: {known}"))
            return CoolingPlan(tuple(heat), (), None, total_liquid, total_air, fac.pue, ()), problems
        if loop.supply_temperature_c > cdu.rated_supply_c:
            problems.append(((*where, "supply_temperature_c"), f"{loop.cdu_model} is rated at"
                             f" {cdu.rated_supply_c:g} C facility water; {loop.supply_temperature_c:g} C declared"
                             f" derates it (not planned); allowed: supply_temperature_c <= {cdu.rated_supply_c:g}"))
        by_su: dict[int, list[RackHeat]] = defaultdict(list)
        su_of = {r.name: r.su for r in racks}
        for h in liquid_racks:
            su = su_of.get(h.rack)
            if su is not None:
                by_su[su].append(h)
        usable = loop.cdus_per_row - SPARE_CDUS[loop.redundancy](loop.cdus_per_row)
        for su in sorted(by_su):
            members = by_su[su]
            load = sum(h.liquid_w for h in members)
            need_lpm = load / (WATER_J_PER_KG_K * loop.delta_t_k) * 60
            row = RowCooling(f"su{su:02d}", su, tuple(h.rack for h in members), round(load, 1), loop.cdus_per_row,
                             usable, usable * cdu.capacity_w, round(need_lpm, 1), usable * cdu.flow_lpm)
            rows.append(row)
            if row.margin_w < 0:
                fix = math.ceil(load / cdu.capacity_w) + SPARE_CDUS[loop.redundancy](loop.cdus_per_row)
                problems.append(((*where, "cdus_per_row"), f"row {row.row} ({len(members)} racks, most"
                                 f" {max(members, key=lambda h: h.liquid_w).rack}): {load:,.0f} W to liquid;"
                                 f" {usable} usable of {loop.cdus_per_row} x {loop.cdu_model} ({loop.redundancy})"
                                 f" carry {row.capacity_w:,.0f} W, short by {-row.margin_w:,.0f} W;"
                                 f" allowed: cdus_per_row >= {fix}"))
            elif need_lpm > row.flow_lpm:
                problems.append(((*where, "delta_t_k"), f"row {row.row}: {load:,.0f} W at {loop.delta_t_k:g} K rise"
                                 f" needs {need_lpm:,.0f} l/min, the usable CDUs move {row.flow_lpm:,.0f} l/min"))
        bom.append(("cooling", loop.cdu_model, loop.cdus_per_row * len(rows), cdu.price))
        bom.append(("cooling", "leak-detection-per-rack", len(liquid_racks), loop.leak_detection_price_per_rack))
        manifolds: dict[str, int] = defaultdict(int)
        for unit in spec.scalable_units:
            if unit.rack_system:
                manifolds[unit.rack_system] += unit.racks
        for system, count in sorted(manifolds.items()):
            bom.append(("cooling", f"{system}-manifold", count, spec.catalog.rack_systems[system].manifold_price))
    total = total_liquid + total_air
    liquid_pue = loop.pue if loop is not None else fac.pue
    blended = round((total_liquid * liquid_pue + total_air * fac.pue) / total, 3) if total else fac.pue
    return CoolingPlan(tuple(heat), tuple(rows), loop.cdu_model if loop else None, round(total_liquid, 1),
                       round(total_air, 1), blended, tuple(bom)), problems
