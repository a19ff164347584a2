"""ethernet_interfaces, loopback_interfaces, management_interfaces, vlan_interfaces."""

from __future__ import annotations

from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._eos.qos import QOS_PROFILE
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["ethernet_interfaces", "loopback_interfaces", "management_interfaces", "EOS_MGMT_INTERFACE"]

EOS_MGMT_INTERFACE = "Management1"  # the Plan's eth0, as EOS names the management port
# EOS spells 800G and 1.6T with their lane count (8 x 100G / 8 x 200G); lower speeds are plain "<n>g"
_EOS_SPEED = {800: "800g-8", 1600: "1.6t-8"}


def eos_speed(gbps: int | None) -> str | None:
    return _EOS_SPEED.get(gbps, f"{gbps}g") if gbps else None


def ethernet_interfaces(facts: SwitchFacts, qos: SwitchQos) -> list[dict[str, Any]] | None:
    access = {p.name for p in facts.access_ports}
    trunk = {p.name for p in facts.trunk_ports}
    out = []
    for port in facts.ports:
        entry: dict[str, Any] = {"name": port.name, "description": port.description, "mtu": port.mtu,
                                 "speed": eos_speed(port.speed_gbps)}
        if port.ip:
            entry["ip_address"] = port.ip
        elif port.name in access:
            entry["access_vlan"] = facts.plane_vlan
        elif port.name in trunk:
            entry["trunk_vlans"] = [facts.plane_vlan]
        entry["lossless"] = facts.lossless
        if facts.lossless:
            entry["service_profile"] = QOS_PROFILE
        out.append(entry)
    return out or None


def loopback_interfaces(facts: SwitchFacts, qos: SwitchQos) -> list[dict[str, Any]] | None:
    loop = facts.loopback
    return [{"name": loop.name, "ip_address": loop.ip}] if loop is not None and loop.ip else None


def management_interfaces(facts: SwitchFacts, qos: SwitchQos) -> list[dict[str, Any]] | None:
    mgmt = facts.mgmt
    if mgmt is None or not mgmt.ip:
        return None
    return [{"name": EOS_MGMT_INTERFACE, "vrf": facts.mgmt_vrf, "ip_address": mgmt.ip, "gateway": mgmt.gateway}]
