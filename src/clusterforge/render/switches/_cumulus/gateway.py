"""SVIs and their first hops on Cumulus NVUE, as the Plan's gateway record decides them.

Anycast (storage): VRR, the gateway beside the SVI's own address, NVUE's default virtual MAC
(`vrr mac-address auto`, 00:00:5e:00:01:01; the record says so). VRRP (management / oob top pair):
`ip vrrp virtual-router <vrid>` with every block's gateway and the switch's priority. Single:
the gateway as a plain address. Paths as NVIDIA's NVUE reference writes them for Cumulus 5.x up
to 5.14 (`ip vrr`, `ip vrrp`, `enable on`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.vocab import GatewayMethod

__all__ = ["svi_entries"]


def svi_entries(facts: SwitchFacts) -> Iterator[tuple[str, dict[str, Any]]]:
    """(NVUE name, interface fields) per SVI: the Plan's SVIs, then SVIs that exist for first hops."""
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
        fields: dict[str, Any] = {"vlan": vlan, "mtu": svi.mtu if svi is not None else mine[0].mtu}
        if method == GatewayMethod.ANYCAST:
            fields["vrr"] = [h.vip for h in mine]
        elif method == GatewayMethod.VRRP:
            groups: dict[int, dict[str, Any]] = {}
            for h in mine:
                group = groups.setdefault(h.vrid or 1, {"id": h.vrid or 1, "priority": h.priority, "addresses": []})
                group["addresses"].append(h.vip.split("/")[0])
            fields["vrrp"] = list(groups.values())
        elif method == GatewayMethod.SINGLE:
            addresses += [h.vip for h in mine]
        fields["addresses"] = addresses
        yield f"vlan{vlan}", fields
