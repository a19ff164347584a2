"""NVML clock-event ("throttle") reasons: bitmask decoding and cause classification. Pure.

Bit values are NVML's ``nvmlClocksEventReason*`` (formerly ``nvmlClocksThrottleReason*``)
constants from nvml.h; they are fixed by the driver ABI, so they are spelled out here and
the decoding does not need pynvml.
"""

from __future__ import annotations

from collections.abc import Iterable

GPU_IDLE = 0x1
APPLICATIONS_CLOCKS_SETTING = 0x2
SW_POWER_CAP = 0x4
HW_SLOWDOWN = 0x8
SYNC_BOOST = 0x10
SW_THERMAL_SLOWDOWN = 0x20
HW_THERMAL_SLOWDOWN = 0x40
HW_POWER_BRAKE_SLOWDOWN = 0x80
DISPLAY_CLOCK_SETTING = 0x100

REASON_NAMES: dict[int, str] = {
    GPU_IDLE: "gpu_idle",
    APPLICATIONS_CLOCKS_SETTING: "applications_clocks_setting",
    SW_POWER_CAP: "sw_power_cap",
    HW_SLOWDOWN: "hw_slowdown",
    SYNC_BOOST: "sync_boost",
    SW_THERMAL_SLOWDOWN: "sw_thermal_slowdown",
    HW_THERMAL_SLOWDOWN: "hw_thermal_slowdown",
    HW_POWER_BRAKE_SLOWDOWN: "hw_power_brake_slowdown",
    DISPLAY_CLOCK_SETTING: "display_clock_setting",
}

# Reasons that lower clocks under load (a finding); the others are informational.
CAUSE_OF: dict[str, str] = {
    "sw_power_cap": "power",
    "hw_power_brake_slowdown": "power",
    "sw_thermal_slowdown": "thermal",
    "hw_thermal_slowdown": "thermal",
    "hw_slowdown": "hardware",
}

THROTTLING_MASK = SW_POWER_CAP | HW_SLOWDOWN | SW_THERMAL_SLOWDOWN | HW_THERMAL_SLOWDOWN | HW_POWER_BRAKE_SLOWDOWN


def decode(mask: int) -> list[str]:
    """Names of the bits set in ``mask``, lowest bit first; unknown bits as ``unknown_0x...``."""
    if mask < 0:
        raise ValueError(f"negative reason mask: {mask}")
    names = []
    bit = 1
    remaining = mask
    while remaining:
        if remaining & bit:
            names.append(REASON_NAMES.get(bit, f"unknown_{bit:#x}"))
            remaining &= ~bit
        bit <<= 1
    return names


def throttling_names(mask: int) -> list[str]:
    """Only the reasons that mean the clocks were held down under load."""
    return decode(mask & THROTTLING_MASK)


def causes(names: Iterable[str]) -> list[str]:
    """Distinct causes ('power', 'thermal', 'hardware') of throttling reason names, sorted."""
    return sorted({CAUSE_OF[n] for n in names if n in CAUSE_OF})


def summarize_masks(masks: Iterable[int]) -> dict:
    """Counts of each reason over a series of sampled masks, and the OR of all of them."""
    counts: dict[str, int] = {}
    union = 0
    total = 0
    for m in masks:
        total += 1
        union |= m
        for name in decode(m):
            counts[name] = counts.get(name, 0) + 1
    throttled = throttling_names(union)
    return {
        "samples": total,
        "mask_union": union,
        "mask_union_hex": f"{union:#x}",
        "counts": counts,
        "fractions": {k: (v / total if total else 0.0) for k, v in counts.items()},
        "throttling": throttled,
        "causes": causes(throttled),
    }
