"""ip_routing and router_bgp."""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._eos.schema import EosIpRouting
from clusterforge.render.switches._frr.router_bgp import RouterBgp
from clusterforge.render.switches._frr.router_bgp import router_bgp as _bgp
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["ip_routing", "router_bgp"]


def ip_routing(facts: SwitchFacts, qos: SwitchQos) -> EosIpRouting:
    # routed switches, and switches that are a plane's gateway (they route between its blocks), forward in
    # the default VRF; the management VRF only ever hosts the switch itself
    return EosIpRouting(default=facts.device.asn is not None or bool(facts.first_hops),
                        mgmt_vrf=facts.mgmt_vrf if facts.mgmt else None)


def router_bgp(facts: SwitchFacts, qos: SwitchQos) -> RouterBgp | None:
    return _bgp(facts)
