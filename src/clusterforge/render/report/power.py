"""Power and cooling: per-rack and per-PDU utilisation against their limits, and site totals.

Loads and limits come from the Plan (racks, PDUs) and the Facility; this module only compares and sums.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from clusterforge.model.site import Facility
from clusterforge.plan.objects import Plan
from clusterforge.render.report.theme import NEAR_LIMIT_FRACTION, fmt_kw, fmt_pct, status_for

__all__ = ["pdu_phases_kw", "power_view"]

_WORST = {"ok": 0, "near": 1, "over": 2}


def _worst(*statuses: str) -> str:
    return max(statuses, key=_WORST.__getitem__)


def pdu_phases_kw(loads: tuple[float, ...]) -> str:
    return " / ".join(f"{load / 1000:.1f}" for load in loads)


def power_view(plan: Plan, facility: Facility, average_load_fraction: float) -> dict[str, Any]:
    racks = []
    notices: list[str] = []
    for rack in plan.racks:
        power = status_for(rack.power_w, rack.budget_w)
        weight = status_for(rack.weight_kg, facility.rack_max_weight_kg)
        floor = status_for(rack.floor_load_kg_m2, facility.floor_load_kg_m2)
        cooling_limit = (facility.cooling.liquid_limit_w if rack.cooling == "liquid"
                         else facility.cooling.air_limit_w)
        cooling = status_for(rack.power_w, cooling_limit) if cooling_limit else "ok"
        racks.append({
            "name": rack.name, "role": rack.role, "su": rack.su, "power_w": rack.power_w,
            "budget_w": rack.budget_w, "capacity_w": rack.capacity_w,
            "budget_fraction": rack.power_w / rack.budget_w if rack.budget_w else 1.0,
            "cooling": rack.cooling, "cooling_limit_w": cooling_limit, "weight_kg": rack.weight_kg,
            "floor_load_kg_m2": rack.floor_load_kg_m2, "used_u": rack.used_u, "rack_u": rack.rack_u,
            "phase_imbalance_pct": rack.phase_imbalance_pct,
            "status": _worst(power, weight, floor, cooling),
            "power_status": power, "weight_status": weight, "floor_status": floor, "cooling_status": cooling,
        })
        for what, status, text in (
            ("power", power, f"{fmt_kw(rack.power_w)} of its {fmt_kw(rack.budget_w)} budget"),
            ("weight", weight, f"{rack.weight_kg:,.0f} kg of {facility.rack_max_weight_kg:,.0f} kg"),
            ("floor load", floor, f"{rack.floor_load_kg_m2:,.0f} of {facility.floor_load_kg_m2:,.0f} kg/m²"),
            ("cooling", cooling, f"{fmt_kw(rack.power_w)} of the {rack.cooling} limit {fmt_kw(cooling_limit)}"),
        ):
            if status != "ok":
                notices.append(f"rack {rack.name}: {what} at {'over' if status == 'over' else 'near'} its limit:"
                               f" {text}")
    pdus = []
    for pdu in plan.pdus:
        status = status_for(pdu.load_w, pdu.capacity_w)
        per_phase = pdu.capacity_w / len(pdu.phase_load_w) if pdu.phase_load_w else pdu.capacity_w
        phase_status = _worst("ok", *(status_for(load, per_phase) for load in pdu.phase_load_w))
        pdus.append({
            "name": pdu.name, "rack": pdu.rack, "feed": pdu.feed, "model": pdu.model, "load_w": pdu.load_w,
            "capacity_w": pdu.capacity_w, "fraction": pdu.load_w / pdu.capacity_w if pdu.capacity_w else 1.0,
            "outlets": f"{pdu.outlets_used} / {pdu.outlets}", "ip": pdu.ip or "",
            "phases": pdu_phases_kw(pdu.phase_load_w),
            "status": _worst(status, phase_status),
        })
        if phase_status != "ok":
            word = "over" if phase_status == "over" else "near"
            notices.append(f"PDU {pdu.name}: a phase is {word} its {fmt_kw(per_phase)} share"
                           f" (phases {pdu_phases_kw(pdu.phase_load_w)} kW)")
    it_w = sum(d.power_w for d in plan.devices)
    by_cooling: dict[str, float] = {}
    for rack in plan.racks:
        by_cooling[rack.cooling] = by_cooling.get(rack.cooling, 0) + rack.power_w
    statuses = Counter(rack["status"] for rack in racks)
    return {
        "racks": racks, "pdus": pdus, "warnings": list(plan.warnings), "notices": notices,
        "near_fraction": fmt_pct(NEAR_LIMIT_FRACTION),
        "totals": {
            "it_w": it_w, "pue": facility.pue, "facility_w": it_w * facility.pue,
            "average_it_w": it_w * average_load_fraction,
            "average_facility_w": it_w * average_load_fraction * facility.pue,
            "average_load_fraction": average_load_fraction,
            "by_cooling": dict(sorted(by_cooling.items())),
            "budget_w": sum(rack.budget_w for rack in plan.racks),
            "racks_ok": statuses["ok"], "racks_near": statuses["near"], "racks_over": statuses["over"],
        },
    }
