"""One palette and one set of number formats for every report view, so colours mean the same everywhere."""

from __future__ import annotations

__all__ = [
    "KIND_COLOURS", "KIND_LABELS", "FEED_COLOURS", "COOLING_COLOURS", "RAIL_COLOURS", "STATUS_COLOURS",
    "NEAR_LIMIT_FRACTION", "FONT", "rail_colour", "status_for", "fmt_kw", "fmt_money", "fmt_pct", "fmt_int",
]

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"  # installed fonts only: the report fetches nothing

# fill, stroke, text — by Device.kind
KIND_COLOURS: dict[str, tuple[str, str, str]] = {
    "server": ("#e7f0ff", "#3b6fd8", "#14306b"),
    "storage": ("#fff3dc", "#d08a00", "#5a3b00"),
    "leaf": ("#e3f6ee", "#1f9d6b", "#0c4a32"),
    "spine": ("#efe8ff", "#7048d8", "#2f1a70"),
    "core": ("#ffe6ee", "#c8336a", "#5c0f2b"),
    "mgmt-switch": ("#eef0f3", "#6b7689", "#2b3340"),
    "nvlink-switch": ("#e0f7fa", "#00838f", "#004d54"),  # rack-scale systems' trays (plan.rack_trays)
    "power-shelf": ("#fdecea", "#c0392b", "#5b1a13"),
}
KIND_LABELS = {"server": "GPU server", "storage": "storage server", "leaf": "leaf switch",
               "spine": "spine switch", "core": "core switch", "mgmt-switch": "management / OOB switch",
               "nvlink-switch": "NVLink switch tray", "power-shelf": "power shelf"}
FEED_COLOURS = {"A": "#d64545", "B": "#2f6fdb"}
COOLING_COLOURS = {"air": "#5b8db8", "liquid": "#0f9bb3"}
RAIL_COLOURS = ("#3b6fd8", "#1f9d6b", "#d08a00", "#c8336a", "#7048d8", "#0f9bb3", "#8a5a2b", "#5d6b7a")
STATUS_COLOURS = {"ok": "#1f9d6b", "near": "#d08a00", "over": "#d64545"}

# a load at or above this fraction of its limit is shown amber: legal, but the next change may not be
NEAR_LIMIT_FRACTION = 0.9


def rail_colour(rail: int | None) -> str:
    return RAIL_COLOURS[rail % len(RAIL_COLOURS)] if rail is not None else KIND_COLOURS["leaf"][1]


def status_for(value: float, limit: float) -> str:
    if limit <= 0 or value > limit:
        return "over"
    return "near" if value >= NEAR_LIMIT_FRACTION * limit else "ok"


def fmt_kw(watts: float, digits: int = 1) -> str:
    return f"{watts / 1000:,.{digits}f} kW"


def fmt_money(amount: float) -> str:
    return f"{amount:,.0f}"


def fmt_pct(fraction: float, digits: int = 0) -> str:
    return f"{fraction * 100:.{digits}f} %"


def fmt_int(value: float) -> str:
    return f"{value:,.0f}"
