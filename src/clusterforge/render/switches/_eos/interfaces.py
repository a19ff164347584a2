"""ethernet_interfaces, loopback_interfaces, management_interfaces, vlan_interfaces."""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._eos.qos import QOS_PROFILE
from clusterforge.render.switches._eos.schema import EosEthernetInterface, EosLoopbackInterface, EosManagementInterface
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["ethernet_interfaces", "loopback_interfaces", "management_interfaces", "EOS_MGMT_INTERFACE",
           "EOS_LANE_SPEEDS", "eos_speed"]

EOS_MGMT_INTERFACE = "Management1"  # the Plan's eth0, as EOS names the management port
# The lane-qualified `speed` forms EOS's CLI takes: <rate>-<lanes> (pyavd 6.4 eos_cli_config_gen schema,
# ethernet_interfaces[].speed, which lists the CLI's values). A port runs at a rate on rate / lane-rate of the
# model's SerDes lanes (a 400G port of 8 lanes has 50G lanes: 400g-8, 200g-4, 100g-2); a rate that is no whole
# number of those lanes, or has no such form, is written as the plain rate EOS also takes ("40g", "25g").
EOS_LANE_SPEEDS = frozenset({
    "50g-1", "50g-2", "40g-4", "100g-1", "100g-2", "100g-4", "200g-1", "200g-2", "200g-4",
    "400g-2", "400g-4", "400g-8", "800g-4", "800g-8", "1.6t-8"})


def _rate(gbps: int) -> str:
    return f"{gbps // 1000}.{gbps % 1000 // 100}t" if gbps >= 1000 else f"{gbps}g"


def eos_speed(gbps: int | None, lane_gbps: float | None = None, lanes_per_port: int = 8) -> str | None:
    if not gbps:
        return None
    if lane_gbps:
        lanes = gbps / lane_gbps
        if lanes.is_integer() and 1 <= lanes <= lanes_per_port and f"{_rate(gbps)}-{int(lanes)}" in EOS_LANE_SPEEDS:
            return f"{_rate(gbps)}-{int(lanes)}"
    return _rate(gbps)


def ethernet_interfaces(facts: SwitchFacts, qos: SwitchQos) -> tuple[EosEthernetInterface, ...] | None:
    access = {p.name for p in facts.access_ports}
    trunk = {p.name for p in facts.trunk_ports}
    out = []
    for port in facts.ports:
        routed = bool(port.ip)
        out.append(EosEthernetInterface(
            name=port.name, description=port.description, mtu=port.mtu,
            speed=eos_speed(port.speed_gbps, facts.lane_gbps, facts.lanes_per_port),
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
