"""Arista EOS: Ethernet<port>/1, the first lane of each front-panel port."""

from __future__ import annotations

from clusterforge.nos.traits import NosTraits
from clusterforge.vocab import Nos

__all__ = ["EOS"]


def _port_name(index: int, lanes_per_port: int) -> str:
    return f"Ethernet{index + 1}/1"


EOS = NosTraits(Nos.EOS, Nos.label(Nos.EOS), _port_name)
