"""FRR structured config (SONiC's bgpd in split mode, the lab's FRR switches): one function per section."""

from __future__ import annotations

from clusterforge.render.switches._frr.hostname import hostname
from clusterforge.render.switches._frr.router_bgp import ECMP_MIN_PATHS, router_bgp
from clusterforge.render.switches._frr.schema import FrrConfig
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["frr_structured_config", "router_bgp", "ECMP_MIN_PATHS", "FrrConfig"]


def frr_structured_config(facts: SwitchFacts) -> FrrConfig:
    # field order = order of sections in frr.conf
    return FrrConfig(hostname=hostname(facts), router_bgp=router_bgp(facts))
