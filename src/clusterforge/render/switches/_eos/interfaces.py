"""ethernet_interfaces, loopback_interfaces, management_interfaces, vlan_interfaces."""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._eos.qos import QOS_PROFILE
from clusterforge.render.switches._eos.schema import EosEthernetInterface, EosLoopbackInterface, EosManagementInterface
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["ethernet_interfaces", "loopback_interfaces", "management_interfaces", "EOS_MGMT_INTERFACE"]

EOS_MGMT_INTERFACE = "Management1"  # the Plan's eth0, as EOS names the management port
# EOS spells 800G and 1.6T with their lane count (8 x 100G / 8 x 200G); lower speeds are plain "<n>g"
_EOS_SPEED = {800: "800g-8", 1600: "1.6t-8"}


def eos_speed(gbps: int | None) -> str | None:
    return _EOS_SPEED.get(gbps, f"{gbps}g") if gbps else None


def ethernet_interfaces(facts: SwitchFacts, qos: SwitchQos) -> tuple[EosEthernetInterface, ...] | None:
    access = {p.name for p in facts.access_ports}
    trunk = {p.name for p in facts.trunk_ports}
    out = []
    for port in facts.ports:
        routed = bool(port.ip)
        out.append(EosEthernetInterface(
            name=port.name, description=port.description, mtu=port.mtu, speed=eos_speed(port.speed_gbps),
            lossless=facts.lossless,
            ip_address=port.ip if routed else None,
            access_vlan=facts.plane_vlan if not routed and port.name in access else None,
            trunk_vlans=(facts.plane_vlan,) if not routed and port.name not in access and port.name in trunk else None,
            service_profile=QOS_PROFILE if facts.lossless else None))
    return tuple(out) or None


def loopback_interfaces(facts: SwitchFacts, qos: SwitchQos) -> tuple[EosLoopbackInterface, ...] | None:
    loop = facts.loopback
    return (EosLoopbackInterface(loop.name, loop.ip),) if loop is not None and loop.ip else None


def management_interfaces(facts: SwitchFacts, qos: SwitchQos) -> tuple[EosManagementInterface, ...] | None:
    mgmt = facts.mgmt
    if mgmt is None or not mgmt.ip:
        return None
    return (EosManagementInterface(EOS_MGMT_INTERFACE, facts.mgmt_vrf, mgmt.ip, mgmt.gateway),)
