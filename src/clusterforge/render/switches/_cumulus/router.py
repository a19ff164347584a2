"""router / vrf: BGP identity globally, sessions and originated prefixes in VRF default."""

from __future__ import annotations

from collections.abc import Mapping

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._cumulus.schema import NvueRouter
from clusterforge.render.switches._frr.router_bgp import RouterBgp, router_bgp
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["router", "vrf"]


def router(facts: SwitchFacts, qos: SwitchQos) -> NvueRouter | None:
    bgp = router_bgp(facts)
    return NvueRouter(asn=bgp.asn, router_id=bgp.router_id) if bgp else None


def vrf(facts: SwitchFacts, qos: SwitchQos) -> Mapping[str, RouterBgp] | None:
    bgp = router_bgp(facts)
    return {"default": bgp} if bgp else None
