"""Port names as each NOS spells them, from a zero-based port index."""

from __future__ import annotations

from functools import lru_cache

from clusterforge.vocab import Nos

__all__ = ["port_name"]


@lru_cache(maxsize=65_536)  # a handful of NOS x lane widths x port indexes, named millions of times
def port_name(nos: str, index: int, lanes_per_port: int = 8) -> str:
    if nos == Nos.SONIC:
        return f"Ethernet{index * lanes_per_port}"
    if nos == Nos.CUMULUS:
        return f"swp{index + 1}"
    if nos == Nos.EOS:
        return f"Ethernet{index + 1}/1"
    if nos == Nos.INFINIBAND:
        return f"{index // 2 + 1}/{index % 2 + 1}"  # two NDR ports per OSFP cage
    raise ValueError(f"unknown NOS {nos!r}")
