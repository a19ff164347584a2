"""Cumulus Linux: swp1, swp2, ...; VRR answers with NVUE's `vrr mac-address auto`, 00:00:5e:00:01:01
(nv show interface <id> ip vrr), whatever MAC is declared."""

from __future__ import annotations

from clusterforge.nos.traits import NosTraits
from clusterforge.vocab import Nos

__all__ = ["CUMULUS", "CUMULUS_VRR_MAC"]

CUMULUS_VRR_MAC = "00:00:5e:00:01:01"


def _port_name(index: int, lanes_per_port: int) -> str:
    return f"swp{index + 1}"


CUMULUS = NosTraits(Nos.CUMULUS, Nos.label(Nos.CUMULUS), _port_name, anycast_mac=CUMULUS_VRR_MAC)
