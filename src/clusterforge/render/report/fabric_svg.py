"""Fabric diagrams, one per plane: tiers as rows, scalable units as columns, link bundles with counts.

Devices are drawn as groups (an SU's leaves, the spine tier, an SU's servers), never one line per cable,
so a 100k-GPU fabric reads like the lab's. Beyond MAX_SU_COLUMNS the middle SUs fold into one column
with summed counts. fabric_view() computes coordinates; templates/report/fabric.svg.j2 draws them.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from clusterforge.plan.objects import Device, Plan
from clusterforge.render.report.theme import KIND_COLOURS, RAIL_COLOURS, rail_colour
from clusterforge.vocab import DeviceKind

__all__ = ["FABRIC_TEMPLATE", "MAX_SU_COLUMNS", "fabric_view"]

FABRIC_TEMPLATE = "fabric.svg.j2"
MAX_SU_COLUMNS = 6  # first MAX-2 SUs, one folded column, the last SU

WIDTH = 1240
MARGIN = 28
HEADER_H = 104
ROW_H = 92
ROW_GAP = 96
CHIP_H = 20
CHIP_GAP = 5
ROWS = ("core", "spine", "leaf", "endpoint")
MAX_COLUMN_W = 440
TOOLTIP_NAMES = 8  # a group's tooltip lists its devices up to this many, else the first and the last
MIN_SPAN_W = 640

TIER_NAMES = {
    "data": {"core": "core", "spine": "spine", "leaf": "leaf", "endpoint": "GPU servers"},
    "storage": {"core": "core", "spine": "storage spine", "leaf": "storage leaf", "endpoint": "servers"},
    "management": {"core": "core", "spine": "aggregation", "leaf": "ToR", "endpoint": "servers"},
    "oob": {"core": "core", "spine": "OOB aggregation", "leaf": "OOB ToR", "endpoint": "BMCs"},
}
PLANE_TITLES = {"data": "Data (compute) fabric", "storage": "Storage fabric", "management": "Management network",
                "oob": "Out-of-band (BMC) network"}


@dataclass
class _Group:
    row: str
    column: str
    devices: dict[str, Device] = field(default_factory=dict)
    sus: set[int] = field(default_factory=set)


def _column(device: Device, shown: set[int]) -> str:
    if device.su is None:
        return "storage" if device.kind == DeviceKind.STORAGE else "site"
    return f"su{device.su}" if device.su in shown else "fold"


def _row(device: Device) -> str:
    if device.kind == DeviceKind.CORE:
        return "core"
    if device.kind == DeviceKind.SPINE or (device.kind == DeviceKind.MGMT_SWITCH and device.su is None):
        return "spine"
    if device.kind in (DeviceKind.LEAF, DeviceKind.MGMT_SWITCH):
        return "leaf"
    return "endpoint"


def _short(name: str, su: int | None) -> str:
    prefix = f"su{su:02d}-" if su is not None else ""
    short = name[len(prefix):] if prefix and name.startswith(prefix) else name
    return short.removeprefix("leaf-")


def _gbps(value: float) -> str:
    return f"{value / 1000:,.1f} Tb/s" if value >= 1000 else f"{value:,.0f} Gb/s"


def _updown(down: float, up: float) -> str:
    """A leaf group's downlink against uplink bandwidth, as its cables give it."""
    if not up:
        return f"↓{_gbps(down)} · no uplinks"
    return f"↓{_gbps(down)} ↑{_gbps(up)} · {down / up:.2f}:1".replace(".00:", ":")


def _tooltip(names: list[str]) -> str:
    if len(names) <= TOOLTIP_NAMES:
        return ", ".join(names)
    return f"{names[0]} … {names[-1]} ({len(names):,} devices)"


def _shown_sus(sus: list[int]) -> set[int]:
    if len(sus) <= MAX_SU_COLUMNS:
        return set(sus)
    return set(sus[: MAX_SU_COLUMNS - 2]) | {sus[-1]}


def _group_title(group: _Group, names: dict[str, str]) -> str:
    count = len(group.devices)
    kinds = Counter(d.kind for d in group.devices.values())
    noun = names[group.row]
    if group.column == "fold":
        where = f"{len(group.sus)} more SUs"
    elif group.column.startswith("su"):
        where = f"SU {group.column[2:]}"
    else:
        where = ""
    if group.row == "endpoint" and kinds.get("storage") and not kinds.get("server"):
        noun = "storage servers"
    what = f"{count} × {noun}" if count != 1 else f"1 × {noun.removesuffix('s')}"
    return f"{where} · {what}" if where else what


def _group_lines(group: _Group, down: float, up: float) -> list[dict[str, Any]]:
    models = Counter(d.model for d in group.devices.values())
    lines = [{"text": ", ".join(f"{count} × {model}" for model, count in sorted(models.items())), "bold": False}]
    if group.row == "leaf":
        lines.append({"text": _updown(down, up), "bold": True})
    gpus = sum(d.gpus for d in group.devices.values())
    if group.row == "endpoint" and gpus:
        lines.append({"text": f"{gpus:,} GPUs", "bold": False})
    return lines


def _chip_row(devices: list[Device], box_w: float, compact: bool) -> list[dict[str, Any]]:
    chips: list[dict[str, Any]] = []
    x = 0.0
    for device in devices:
        label = _short(device.name, device.su)
        if compact:
            label = f"R{device.rail}" if device.rail is not None else label.rsplit("-", 1)[-1]
        width = max(28.0 if compact else 44.0, 6.2 * len(label) + (10 if compact else 14))
        chips.append({"name": device.name, "label": label, "w": width, "dx": x,
                      "colour": rail_colour(device.rail) if device.rail is not None
                      else KIND_COLOURS.get(device.kind, KIND_COLOURS["mgmt-switch"])[1]})
        x += width + CHIP_GAP
    total = x - CHIP_GAP
    if total > box_w - 20:
        return []
    offset = (box_w - total) / 2
    for chip in chips:
        chip["dx"] += offset
    return chips


def _chips(group: _Group, box_w: float) -> list[dict[str, Any]]:
    """Switch chips on one line: full names, else short ones (R3 for rail 3), else none (counts only)."""
    if group.row == "endpoint" or group.column == "fold":
        return []
    devices = sorted(group.devices.values(), key=lambda d: (d.rail if d.rail is not None else -1, d.name))
    return _chip_row(devices, box_w, compact=False) or _chip_row(devices, box_w, compact=True)


def _grouped(plan: Plan, plane: str) -> tuple[list, list[Device], list[int], set[int], dict, dict]:
    """The plane's links and devices, each device in its (row, column) group."""
    links = [link for link in plan.links if link.plane == plane]
    involved = {link.a.device for link in links} | {link.b.device for link in links}
    members = [d for d in plan.devices if d.name in involved or (d.plane == plane and d.kind != DeviceKind.PDU)]
    sus = sorted({d.su for d in members if d.su is not None})
    shown = _shown_sus(sus)
    groups: dict[tuple[str, str], _Group] = {}
    where: dict[str, tuple[str, str]] = {}
    for device in members:
        row = _row(device)
        column = "all" if row in ("core", "spine") else _column(device, shown)
        key = (row, column)
        group = groups.setdefault(key, _Group(row, column))
        group.devices[device.name] = device
        if device.su is not None:
            group.sus.add(device.su)
        where[device.name] = key
    return links, members, sus, shown, groups, where


def _bundled(links: list, groups: dict, where: dict) -> tuple[dict, Counter, dict]:
    """Links between groups bundled per (upper, lower) pair; rail bundles; Gb/s down and up per group."""
    bundles: dict[tuple, dict[str, Any]] = {}
    rail_bundles: Counter = Counter()
    updown: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])  # group -> [down, up] Gb/s
    for link in links:
        ga, gb = where[link.a.device], where[link.b.device]
        if ga == gb:
            continue
        upper, lower = (ga, gb) if ROWS.index(ga[0]) < ROWS.index(gb[0]) else (gb, ga)
        lower_device = link.a.device if ga == lower else link.b.device
        upper_device = link.b.device if lower_device == link.a.device else link.a.device
        bundle = bundles.setdefault((upper, lower), {"count": 0, "gbps": 0.0, "speeds": Counter()})
        bundle["count"] += 1
        bundle["gbps"] += link.speed_gbps
        bundle["speeds"][link.speed_gbps] += 1
        updown[upper][0] += link.speed_gbps
        updown[lower][1] += link.speed_gbps
        if groups[upper].devices[upper_device].rail is not None and lower[0] == "endpoint":
            rail_bundles[(upper, lower, upper_device)] += 1
    return bundles, rail_bundles, updown


def _boxes(groups: dict, sus: list[int], shown: set[int], updown: dict, names: dict) -> tuple[dict, list, dict, int]:
    """One box per group, placed in its row and column: (boxes, rows, row y, page height)."""
    columns = [f"su{su}" for su in sus if su in shown]
    if any(key[1] == "fold" for key in groups):
        columns.insert(MAX_SU_COLUMNS - 2, "fold")  # between the first SUs and the last
    for extra in ("site", "storage"):
        if any(key[1] == extra for key in groups):
            columns.append(extra)
    rows = [row for row in ROWS if any(key[0] == row for key in groups)]
    usable = WIDTH - 2 * MARGIN
    col_w = min(MAX_COLUMN_W, usable / max(1, len(columns)))
    left = MARGIN + (usable - col_w * len(columns)) / 2  # few columns: centred, not stretched
    span_w = max(col_w * len(columns), MIN_SPAN_W)
    span_x = MARGIN + (usable - span_w) / 2
    row_y = {row: HEADER_H + i * (ROW_H + ROW_GAP) for i, row in enumerate(rows)}
    height = HEADER_H + len(rows) * ROW_H + (len(rows) - 1) * ROW_GAP + 64
    boxes: dict[tuple[str, str], dict[str, Any]] = {}
    for key, group in sorted(groups.items(), key=lambda item: (ROWS.index(item[0][0]), item[0][1])):
        row, column = key
        if column == "all":
            x, w = span_x + 8, span_w - 16
        else:
            index = columns.index(column)
            x, w = left + index * col_w + 8, col_w - 16
        kind = Counter(d.kind for d in group.devices.values()).most_common(1)[0][0]
        fill, stroke, text = KIND_COLOURS.get(kind, KIND_COLOURS["mgmt-switch"])
        down, up = updown[key]
        chips = _chips(group, w)
        boxes[key] = {"key": key, "x": x, "y": row_y[row], "w": w, "h": ROW_H, "fill": fill, "stroke": stroke,
                      "text": text, "title": _group_title(group, names), "lines": _group_lines(group, down, up),
                      "chips": chips, "chip_y": row_y[row] + ROW_H - CHIP_H - 10, "chip_h": CHIP_H,
                      "tooltip": _tooltip(sorted(group.devices))}
    return boxes, rows, row_y, height


def _edges(boxes: dict, bundles: dict, rail_bundles: Counter, groups: dict) -> tuple[list, list]:
    """Bundle edges (rails fanned out to their leaf chips) and their speed labels."""
    edges, labels = [], []
    chip_x = {chip["name"]: box["x"] + chip["dx"] + chip["w"] / 2 for box in boxes.values() for chip in box["chips"]}
    for (upper, lower), bundle in sorted(bundles.items(), key=lambda item: (item[0][0], item[0][1])):
        top, bottom = boxes[upper], boxes[lower]
        full_top, full_bottom = upper[1] == "all", lower[1] == "all"
        x = bottom["x"] + bottom["w"] / 2 if full_top or not full_bottom else top["x"] + top["w"] / 2
        y1, y2 = top["y"] + top["h"], bottom["y"]
        speeds = " + ".join(f"{count:,} × {speed:g}G" for speed, count in sorted(bundle["speeds"].items()))
        rails = [(device, count) for (u, low, device), count in rail_bundles.items() if u == upper and low == lower]
        if rails and all(device in chip_x for device, _ in rails):
            spread = bottom["w"] * 0.7
            for i, (device, count) in enumerate(sorted(rails, key=lambda item: chip_x[item[0]])):
                start = bottom["x"] + bottom["w"] * 0.15 + (spread * (i + 0.5) / len(rails))
                edges.append({"x1": start, "y1": y2, "x2": chip_x[device], "y2": y1,
                              "width": 1.2 + min(4.0, math.log2(count + 1) * 0.6),
                              "colour": rail_colour(groups[upper].devices[device].rail), "opacity": 0.85})
        else:
            edges.append({"x1": x, "y1": y1, "x2": x, "y2": y2,
                          "width": 1.5 + min(7.0, math.log2(bundle["count"] + 1) * 0.9),
                          "colour": "#7b8799", "opacity": 0.9})
        labels.append({"x": x, "y": (y1 + y2) / 2, "text": speeds, "sub": _gbps(bundle["gbps"]),
                       "w": 6.2 * max(len(speeds), 10) + 16})
    return edges, labels


def fabric_view(plan: Plan, plane: str) -> dict[str, Any]:
    names = TIER_NAMES.get(plane, TIER_NAMES["data"])
    summary = plan.fabric[plane]
    links, members, sus, shown, groups, where = _grouped(plan, plane)
    bundles, rail_bundles, updown = _bundled(links, groups, where)
    boxes, rows, row_y, height = _boxes(groups, sus, shown, updown, names)
    edges, labels = _edges(boxes, bundles, rail_bundles, groups)
    rails_present = sorted({d.rail for d in members if d.rail is not None and d.kind != DeviceKind.SERVER})
    ratios = ", ".join(f"{tier} {value:g}:1" for tier, value in summary.oversubscription.items())
    stats = [f"{summary.tiers} tiers", f"{summary.leaves} {names['leaf']}", f"{summary.spines} {names['spine']}"]
    if summary.cores:
        stats.append(f"{summary.cores} core")
    stats.append(f"{summary.links:,} links")
    subtitle = summary.transport if summary.nos == summary.transport else f"{summary.transport} · {summary.nos}"
    over = (f"achieved oversubscription {ratios} (declared {summary.declared_oversubscription:g}:1)"
            if ratios else "")
    return {
        "plane": plane, "title": PLANE_TITLES.get(plane, plane), "subtitle": subtitle, "stats": " · ".join(stats),
        "oversubscription": over, "notes": list(summary.notes), "width": WIDTH, "height": height,
        "rows": [{"name": names[row], "y": row_y[row]} for row in rows], "boxes": list(boxes.values()),
        "edges": edges, "labels": labels, "margin": MARGIN,
        "rails": [{"rail": rail, "colour": rail_colour(rail)} for rail in rails_present][: len(RAIL_COLOURS)],
        "folded": len(sus) - len(shown),
    }
