"""ip_routing and router_bgp."""

from __future__ import annotations

from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._frr.router_bgp import RouterBgp
from clusterforge.render.switches._frr.router_bgp import router_bgp as _bgp
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["ip_routing", "router_bgp"]


def ip_routing(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any]:
    # routed switches, and switches that are a plane's gateway (they route between its blocks), forward in
    # the default VRF; the management VRF only ever hosts the switch itself
    return {"default": facts.device.asn is not None or bool(facts.first_hops),
            "mgmt_vrf": facts.mgmt_vrf if facts.mgmt else None}


def router_bgp(facts: SwitchFacts, qos: SwitchQos) -> RouterBgp | None:
    return _bgp(facts)
