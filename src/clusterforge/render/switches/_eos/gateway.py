"""SVIs and their first hops on EOS, as the Plan's gateway record decides them (AVD key names).

Anycast (storage): `ip virtual-router address` (VARP) on the SVI and the one shared
`ip virtual-router mac-address`; VRRP (management / oob top pair): `vrrp <vrid>` with the
switch's priority, the first block's gateway and the rest as secondaries; single: the gateway as
a secondary address. pyavd's eos_cli_config_gen keys: vlan_interfaces[].ip_virtual_router_addresses,
vlan_interfaces[].vrrp_ids[], ip_virtual_router_mac_address.
"""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._eos.schema import EosVlanInterface, EosVrrp, EosVrrpIpv4
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.vocab import GatewayMethod

__all__ = ["vlan_interfaces", "ip_virtual_router_mac_address"]


def _method(facts: SwitchFacts) -> str | None:
    return facts.gateway.method if facts.gateway is not None and facts.first_hops else None


def ip_virtual_router_mac_address(facts: SwitchFacts, qos: SwitchQos) -> str | None:
    if _method(facts) != GatewayMethod.ANYCAST or facts.gateway is None:
        return None
    return facts.gateway.virtual_mac


def vlan_interfaces(facts: SwitchFacts, qos: SwitchQos) -> tuple[EosVlanInterface, ...] | None:
    method = _method(facts)
    hops = facts.gateway_svis
    svis = {svi.name: svi for svi in facts.svis}
    out = []
    for name in [*svis, *(n for n in hops if n not in svis)]:
        svi = svis.get(name)
        mine = hops.get(name, ())
        own = [svi.ip] if svi is not None and svi.ip else []
        own += [h.address for h in mine if h.address not in own]
        virtual: tuple[str, ...] = ()
        vrrp: tuple[EosVrrp, ...] = ()
        if method == GatewayMethod.ANYCAST:
            virtual = tuple(h.vip.split("/")[0] for h in mine)
        elif method == GatewayMethod.VRRP:
            groups: dict[int, tuple[int | None, list[str]]] = {}  # vrid -> (priority, [first, *secondaries])
            for h in mine:
                vip = h.vip.split("/")[0]
                addresses = groups.setdefault(h.vrid or 1, (h.priority, [vip]))[1]
                if addresses[0] != vip:
                    addresses.append(vip)
            vrrp = tuple(EosVrrp(vrid, priority, EosVrrpIpv4(vips[0], tuple(vips[1:])))
                         for vrid, (priority, vips) in groups.items())
        elif method == GatewayMethod.SINGLE:
            own += [h.vip for h in mine]
        out.append(EosVlanInterface(name=name, mtu=svi.mtu if svi is not None else mine[0].mtu, ip_address=own[0],
                                    ip_address_secondaries=tuple(own[1:]), ip_virtual_router_addresses=virtual,
                                    vrrp_ids=vrrp))
    return tuple(out) or None
