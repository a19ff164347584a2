"""Cable and optic class from the distance between two placed devices."""

from __future__ import annotations

__all__ = ["cable_class"]


def cable_class(rack_a: str | None, rack_b: str | None, speed_gbps: int) -> str:
    """dac inside a rack, aoc within an SU's row, fibre (two transceivers) beyond; cat6 for 1G copper."""
    if speed_gbps <= 1:
        return "cat6"
    if rack_a == rack_b:
        return "dac"
    if rack_a and rack_b and rack_a[:4] == rack_b[:4] and rack_a.startswith("su"):
        return "aoc"
    return "fibre"
