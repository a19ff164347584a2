"""ip_routing and router_bgp."""

from __future__ import annotations

from dataclasses import replace

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._eos.schema import EosIpRouting
from clusterforge.render.switches._frr.router_bgp import RouterBgp
from clusterforge.render.switches._frr.router_bgp import router_bgp as _bgp
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["ip_routing", "router_bgp", "maximum_routes", "EOS_DEFAULT_MAX_ROUTES", "EOS_PEER_GROUP",
           "EOS_BGP_TIMERS"]

# EOS's per-neighbour `maximum-routes` default (EOS router-bgp neighbor maximum-routes: 12,000; pyavd's
# peer_groups[].maximum_routes documents 0 as no limit): a session is shut down past it
EOS_DEFAULT_MAX_ROUTES = 12_000
EOS_PEER_GROUP = "FABRIC"
# keepalive / hold (s): FRR's `frr defaults datacenter` profile (FRR user guide, BGP timers: keepalive 3, hold 9), which
# the SONiC frr.conf declares and Cumulus runs by default, so all three NOS fail a peer over in the same 9 s
EOS_BGP_TIMERS = (3, 9)


def maximum_routes(plane_prefixes: int) -> int:
    """Per-neighbour route limit from the Plan: twice what the whole plane originates (every speaker may relay
    all of it; room for one doubling of the fabric), in thousands, never below EOS's default."""
    return max(EOS_DEFAULT_MAX_ROUTES, -(-2 * plane_prefixes // 1000) * 1000)


def ip_routing(facts: SwitchFacts, qos: SwitchQos) -> EosIpRouting:
    # routed switches, and switches that are a plane's gateway (they route between its blocks), forward in
    # the default VRF; the management VRF only ever hosts the switch itself
    return EosIpRouting(default=facts.device.asn is not None or bool(facts.first_hops),
                        mgmt_vrf=facts.mgmt_vrf if facts.mgmt else None)


def router_bgp(facts: SwitchFacts, qos: SwitchQos) -> RouterBgp | None:
    bgp = _bgp(facts)
    return None if bgp is None else replace(bgp, maximum_routes=maximum_routes(facts.plane_prefixes))
