"""SVIs and their first hops on Cumulus NVUE, as the Plan's gateway record decides them.

Anycast (storage): VRR, the gateway beside the SVI's own address, NVUE's default virtual MAC
(`vrr mac-address auto`, 00:00:5e:00:01:01; the record says so). VRRP (management / oob top pair):
`ip vrrp virtual-router <vrid>` with every block's gateway and the switch's priority. Single:
the gateway as a plain address. Paths as NVIDIA's NVUE reference writes them for Cumulus 5.x up
to 5.14 (`ip vrr`, `ip vrrp`, `enable on`).
"""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.render.switches._cumulus.schema import NvueInterface, NvueVrrpGroup
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.vocab import GatewayMethod

__all__ = ["svi_entries"]


def svi_entries(facts: SwitchFacts) -> Iterator[NvueInterface]:
    """One NVUE interface (vlan<id>) per SVI: the Plan's SVIs, then SVIs that exist for first hops."""
    method = facts.gateway.method if facts.gateway is not None else None
    hops = facts.gateway_svis
    names = [svi.name for svi in facts.svis] + [name for name in hops if name not in {s.name for s in facts.svis}]
    svis = {svi.name: svi for svi in facts.svis}
    for name in names:
        svi = svis.get(name)
        mine = hops.get(name, ())
        vlan = svi.vlan if svi is not None else mine[0].vlan
        addresses = [svi.ip] if svi is not None and svi.ip else []
        addresses += [h.address for h in mine if h.address not in addresses]
        vrr: tuple[str, ...] = ()
        vrrp: tuple[NvueVrrpGroup, ...] = ()
        if method == GatewayMethod.ANYCAST:
            vrr = tuple(h.vip for h in mine)
        elif method == GatewayMethod.VRRP:
            groups: dict[int, tuple[int | None, list[str]]] = {}  # vrid -> (priority, addresses)
            for h in mine:
                groups.setdefault(h.vrid or 1, (h.priority, []))[1].append(h.vip.split("/")[0])
            vrrp = tuple(NvueVrrpGroup(vrid, priority, tuple(vips)) for vrid, (priority, vips) in groups.items())
        elif method == GatewayMethod.SINGLE:
            addresses += [h.vip for h in mine]
        yield NvueInterface(f"vlan{vlan}", "svi", addresses=tuple(addresses), vrr=vrr, vrrp=vrrp, vlan=vlan,
                            mtu=svi.mtu if svi is not None else mine[0].mtu)
