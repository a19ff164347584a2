"""Port names as each NOS spells them, from a zero-based port index."""

from __future__ import annotations

__all__ = ["port_name"]


def port_name(nos: str, index: int, lanes_per_port: int = 8) -> str:
    if nos == "sonic":
        return f"Ethernet{index * lanes_per_port}"
    if nos == "cumulus":
        return f"swp{index + 1}"
    if nos == "eos":
        return f"Ethernet{index + 1}/1"
    if nos == "infiniband":
        return f"{index // 2 + 1}/{index % 2 + 1}"  # two NDR ports per OSFP cage
    raise ValueError(f"unknown NOS {nos!r}")
