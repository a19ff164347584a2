"""router_bgp: eBGP on every routed switch-to-switch port, as the Plan addresses it.

One session per /31 (numbered, the Plan's peer address), remote-as read from the peer
switch's Plan ASN. The switch originates its loopback and the subnets it serves hosts on
(server-facing /31s, storage SVI subnet); everything else is learned.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.plan.slotinit import slot_init
from clusterforge.render.switches.facts import SwitchFacts, address_of, network_of

__all__ = ["BgpNeighbor", "RouterBgp", "router_bgp", "ECMP_MIN_PATHS"]

# ECMP width floor: SONiC's own bgpd template ships `maximum-paths 64`. A leaf with more uplinks
# than that gets one path per uplink. Fixed rather than per-neighbour-count so that a spine's
# setting does not change when an SU (and its sessions) is added.
ECMP_MIN_PATHS = 64


@slot_init  # one per port (or session) of every switch: plan/slotinit.py
@dataclass(frozen=True, slots=True)
class BgpNeighbor:
    """One numbered eBGP session: the peer's /31 address and ASN, named after the peer's port."""

    ip: str
    remote_as: int
    description: str
    interface: str


@dataclass(frozen=True, slots=True)
class RouterBgp:
    """The BGP process every routed NOS renders (FRR on SONiC, NVUE on Cumulus, EOS): a typed record, so a
    misspelt field is an AttributeError when the structured config is built, not a template failure."""

    asn: int
    router_id: str
    neighbors: tuple[BgpNeighbor, ...]
    networks: tuple[str, ...]
    maximum_paths: int
    maximum_routes: int | None = None  # per neighbour; EOS only (FRR has no default limit)


def router_bgp(facts: SwitchFacts) -> RouterBgp | None:
    device = facts.device
    if device.asn is None or facts.loopback is None or not facts.loopback.ip:
        return None
    neighbors = tuple(BgpNeighbor(p.peer_ip, p.peer_asn, p.description, p.name) for p in facts.bgp_peers
                      if p.peer_ip and p.peer_asn is not None)  # bgp_peers has both; this tells the type checker
    uplinks = sum(1 for p in facts.bgp_peers if p.direction == "up")
    return RouterBgp(
        asn=device.asn,
        router_id=address_of(facts.loopback.ip),
        neighbors=neighbors,
        networks=(network_of(facts.loopback.ip), *facts.host_subnets),
        maximum_paths=max(ECMP_MIN_PATHS, uplinks),
    )
