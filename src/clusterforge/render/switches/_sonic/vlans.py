"""VLANs: the storage leaves' host VLAN with its SVI, and the access planes' single VLAN.

Host ports are untagged members; switch-to-switch ports of the access planes carry the VLAN
tagged. Data-plane switches have no VLAN at all: the data fabric is routed end to end.
"""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._sonic.gateway import gateway_vlan_interfaces
from clusterforge.render.switches._sonic.schema import Vlan, VlanInterface, VlanMember
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["VLAN", "VLAN_MEMBER", "VLAN_INTERFACE"]


def _bridged(facts: SwitchFacts) -> bool:
    return bool(facts.svis or facts.first_hops or facts.access_ports or facts.trunk_ports)


def VLAN(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Vlan] | None:  # noqa: N802 - table name
    if not _bridged(facts):
        return None
    return {f"Vlan{facts.plane_vlan}": {"vlanid": str(facts.plane_vlan), "mtu": str(facts.plane_mtu)}}


def VLAN_MEMBER(facts: SwitchFacts, qos: SwitchQos) -> dict[str, VlanMember] | None:  # noqa: N802
    vlan = f"Vlan{facts.plane_vlan}"
    out: dict[str, VlanMember] = {f"{vlan}|{p.name}": {"tagging_mode": "untagged"} for p in facts.access_ports}
    out.update({f"{vlan}|{p.name}": {"tagging_mode": "tagged"} for p in facts.trunk_ports})
    return out or None


def VLAN_INTERFACE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, VlanInterface] | None:  # noqa: N802
    out: dict[str, VlanInterface] = {}
    for svi in facts.svis:
        out[svi.name] = {}
        out[f"{svi.name}|{svi.ip}"] = {}
    out.update(gateway_vlan_interfaces(facts))  # first hops: plan/gateways.py
    return out or None
