"""FRR's structured config as a typed record: frr.conf's sections (hostname, then BGP where the switch runs it)."""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.render.switches._frr.router_bgp import BgpNeighbor, RouterBgp

__all__ = ["FrrConfig", "RouterBgp", "BgpNeighbor", "RECORDS"]


@dataclass(frozen=True, slots=True)
class FrrConfig:
    hostname: str  # vtysh prompt and logs name the switch
    router_bgp: RouterBgp | None  # None: no ASN (access planes), so no frr.conf


RECORDS = (FrrConfig, RouterBgp, BgpNeighbor)
