"""Port names as each NOS spells them, from a zero-based port index (the NOS traits table, nos/)."""

from __future__ import annotations

from functools import lru_cache

from clusterforge.nos import traits_for

__all__ = ["port_name"]


@lru_cache(maxsize=65_536)  # a handful of NOS x lane widths x port indexes, named millions of times
def port_name(nos: str, index: int, lanes_per_port: int = 8) -> str:
    return traits_for(nos).port_name(index, lanes_per_port)
