"""The lossless RoCE intent as the report shows it: one row per traffic class, and per lossless plane
its NOS and where that NOS's rendering departs from the vendor's default or cannot carry the intent
(the NOS driver's `lossless_notes`; docs/pfc-headroom.md)."""

from __future__ import annotations

from typing import Any

from clusterforge.plan.objects import Plan
from clusterforge.render.switches.network_os import DRIVERS

__all__ = ["qos_view"]


def _ranges(values: list[int]) -> str:
    """Sorted integers as runs: [0, 1, 2, 5] -> "0-2, 5"."""
    runs: list[list[int]] = []
    for v in values:
        if runs and runs[-1][1] == v - 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def qos_view(plan: Plan) -> dict[str, Any] | None:
    lossless = [p for p in plan.planes.values() if p.lossless]
    if not lossless:
        return None
    q = plan.qos
    dscps: dict[int, list[int]] = {}
    for dscp, tc in enumerate(q.dscp_to_tc):
        dscps.setdefault(tc, []).append(dscp)
    classes = [{
        "tc": tc,
        "dscps": _ranges(dscps.get(tc, [])),
        "schedule": "strict" if kind == "strict" else f"DWRR {weight} %",
        "pfc": "no-drop" if tc == q.roce_priority else "",
        "ecn": f"{q.ecn_min_bytes:,}–{q.ecn_max_bytes:,} B, {q.ecn_probability_pct} %" if tc == q.roce_priority else "",
    } for tc, kind, weight in q.queue_schedule]
    planes = [{"plane": p.name, "nos": p.nos, "notes": DRIVERS[p.nos].lossless_notes} for p in lossless]
    return {"classes": classes, "planes": planes, "watchdog_ms": q.pfc_watchdog_ms,
            "cable_m": q.pfc_cable_length_m, "roce_dscp": q.roce_dscp, "cnp_dscp": q.cnp_dscp}
