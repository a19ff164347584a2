"""FRR structured config (SONiC's bgpd in split mode, the lab's FRR switches): one function per key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clusterforge.render.switches._frr.hostname import hostname
from clusterforge.render.switches._frr.router_bgp import ECMP_MIN_PATHS, router_bgp
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["FRR_KEYS", "frr_structured_config", "router_bgp", "ECMP_MIN_PATHS"]

# Composition order = order of sections in frr.conf.
FRR_KEYS: list[tuple[str, Callable[[SwitchFacts], Any]]] = [
    ("hostname", hostname),      # vtysh prompt and logs name the switch
    ("router_bgp", router_bgp),  # None for switches without an ASN (access planes, InfiniBand)
]


def frr_structured_config(facts: SwitchFacts) -> dict[str, Any]:
    return {key: value for key, build in FRR_KEYS if (value := build(facts)) is not None}
