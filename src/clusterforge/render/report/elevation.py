"""Rack elevations: where each device sits, and how the rack stands against power, cooling and weight.

rack_view() turns one Rack of the Plan into drawing coordinates; rack_svg.rack_svg() draws them.
Nothing is decided here: positions, loads and limits all come from the Plan and the site's Facility.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clusterforge.model.site import Facility
from clusterforge.plan.objects import Device, Pdu, Rack
from clusterforge.render.report.theme import (
    COOLING_COLOURS,
    FEED_COLOURS,
    KIND_COLOURS,
    STATUS_COLOURS,
    fmt_int,
    fmt_kw,
    fmt_pct,
    status_for,
)

__all__ = ["rack_view", "rack_layout_key"]

U_PX = 14
MARGIN = 12
U_NUMBERS_W = 22
PDU_W = 16
GAP = 4
FRAME = 6
INNER_W = 262
HEADER_H = 64
FOOTER_H = 112

X_PDU_A = MARGIN + U_NUMBERS_W
X_FRAME = X_PDU_A + PDU_W + GAP
X_INNER = X_FRAME + FRAME
X_FRAME_RIGHT = X_INNER + INNER_W + FRAME
X_PDU_B = X_FRAME_RIGHT + GAP
WIDTH = X_PDU_B + PDU_W + MARGIN


@dataclass(frozen=True)
class _Box:
    x: float
    y: float
    w: float
    h: float


def _device_box(device: Device, rack_u: int) -> _Box:
    if device.ru is None:
        raise ValueError(f"{device.name}: not placed in a rack unit")  # the planners place every racked device
    top_u = device.ru + device.height_u - 1
    y = HEADER_H + FRAME + (rack_u - top_u) * U_PX
    return _Box(X_INNER + 1, y + 0.5, INNER_W - 2, device.height_u * U_PX - 1)


def _device_lines(device: Device) -> list[dict[str, Any]]:
    """What is written on the device: name and model always; GPUs and draw where there is room."""
    detail = f"{device.gpus} GPU · {fmt_kw(device.power_w)}" if device.gpus else fmt_kw(device.power_w)
    if device.height_u == 1:
        return [{"dy": 10.5, "left": device.name, "right": device.model, "size": 9.5, "bold": True}]
    lines = [{"dy": 12, "left": device.name, "right": "", "size": 10.5, "bold": True},
             {"dy": 24.5, "left": device.model, "right": detail, "size": 9.5, "bold": False}]
    return lines


def _gpu_tiles(device: Device, box: _Box) -> list[_Box]:
    """Small GPU squares along the bottom of servers tall enough to hold them (4 U and up)."""
    if not device.gpus or device.height_u < 4:
        return []
    size, gap = 14.0, 4.0
    count = min(device.gpus, int((box.w - 20) // (size + gap)))
    y = box.y + box.h - size - 8
    return [_Box(box.x + 10 + i * (size + gap), y, size, size) for i in range(count)]


def rack_layout_key(rack: Rack, devices: list[Device]) -> tuple:
    """Racks with the same key look the same (only names differ): large sites show one per layout."""
    return (rack.role, rack.su is None, round(rack.power_w),
            tuple(sorted((d.ru or 0, d.height_u, d.kind, d.model) for d in devices)))


def rack_view(rack: Rack, devices: list[Device], pdus: list[Pdu], facility: Facility) -> dict[str, Any]:
    body_h = rack.rack_u * U_PX + 2 * FRAME
    footer_y = HEADER_H + body_h + 16
    height = footer_y + FOOTER_H
    placed = []
    for device in sorted(devices, key=lambda d: (d.ru or 0, d.name)):
        if device.ru is None:
            continue
        box = _device_box(device, rack.rack_u)
        fill, stroke, text = KIND_COLOURS.get(device.kind, KIND_COLOURS["mgmt-switch"])
        placed.append({
            "name": device.name, "model": device.model, "kind": device.kind, "box": box,
            "fill": fill, "stroke": stroke, "text": text, "lines": _device_lines(device),
            "gpus": device.gpus, "plane": device.plane or "", "gpu_tiles": _gpu_tiles(device, box),
            "title": f"{device.name} ({device.model}) U{device.ru}"
                     f"{'-' + str(device.ru + device.height_u - 1) if device.height_u > 1 else ''}"
                     f" · {fmt_kw(device.power_w, 2)} · {device.weight_kg:g} kg · {device.asset_id}",
        })
    u_labels = [{"u": u, "y": HEADER_H + FRAME + (rack.rack_u - u) * U_PX + U_PX - 3.5}
                for u in range(1, rack.rack_u + 1)]
    bar_w = X_FRAME_RIGHT - X_FRAME
    power_status = status_for(rack.power_w, rack.budget_w)
    fill_fraction = min(rack.power_w / rack.capacity_w, 1.0) if rack.capacity_w else 1.0
    budget_fraction = rack.budget_w / rack.capacity_w if rack.capacity_w else 1.0
    feeds = []
    strip_y, strip_h = HEADER_H, body_h
    for feed, x in (("A", X_PDU_A), ("B", X_PDU_B)):
        side = [pdu for pdu in pdus if pdu.feed == feed]  # one strip per side, all its PDUs (circuits)
        load = sum(pdu.load_w for pdu in side)
        capacity = sum(pdu.capacity_w for pdu in side)
        feeds.append({
            "feed": feed, "x": x, "y": strip_y, "w": PDU_W, "h": strip_h, "colour": FEED_COLOURS[feed],
            "present": bool(side),
            "label": f"{feed} · {' + '.join(pdu.name for pdu in side)} · {fmt_kw(load)}" if side
                     else f"{feed} · no PDU",
            "load_fraction": load / capacity if capacity else 0.0,
        })
    weight_status = status_for(rack.weight_kg, facility.rack_max_weight_kg)
    floor_status = status_for(rack.floor_load_kg_m2, facility.floor_load_kg_m2)
    headroom = 1 - budget_fraction
    return {
        "name": rack.name, "role": rack.role, "su": rack.su, "width": WIDTH, "height": height,
        "subtitle": " · ".join(part for part in (f"SU {rack.su}" if rack.su is not None else "site",
                                                 f"{rack.role} rack", f"{rack.used_u} / {rack.rack_u} U") if part),
        "cooling": rack.cooling, "cooling_colour": COOLING_COLOURS.get(rack.cooling, "#5d6b7a"),
        "frame": _Box(X_FRAME, HEADER_H, X_FRAME_RIGHT - X_FRAME, body_h),
        "inner": _Box(X_INNER, HEADER_H + FRAME, INNER_W, rack.rack_u * U_PX),
        "u_px": U_PX, "u_x": X_PDU_A - 4, "u_labels": u_labels, "devices": placed, "feeds": feeds,
        "bar": {"x": X_FRAME, "y": footer_y + 18, "w": bar_w, "h": 14,
                "fill_w": bar_w * fill_fraction, "budget_x": X_FRAME + bar_w * budget_fraction,
                "colour": STATUS_COLOURS[power_status]},
        "footer_y": footer_y,
        "power_text": f"{fmt_kw(rack.power_w)} of {fmt_kw(rack.budget_w)} budget"
                      f" ({fmt_pct(rack.power_w / rack.budget_w if rack.budget_w else 1)})",
        "capacity_text": f"capacity {fmt_kw(rack.capacity_w)} per feed · {fmt_pct(headroom)} headroom",
        "feeds_text": ("A+B feeds: either one alone carries the rack" if len(rack.feeds) == 2
                       else "single feed: no redundancy"),
        "weight_text": f"{fmt_int(rack.weight_kg)} kg of {fmt_int(facility.rack_max_weight_kg)} kg",
        "floor_text": f"{fmt_int(rack.floor_load_kg_m2)} kg/m² of {fmt_int(facility.floor_load_kg_m2)}",
        "phase_text": f"phase imbalance {rack.phase_imbalance_pct:.0f} %",
        "weight_colour": STATUS_COLOURS[weight_status], "floor_colour": STATUS_COLOURS[floor_status],
        "power_status": power_status,
    }
