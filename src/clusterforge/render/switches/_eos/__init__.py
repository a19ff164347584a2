"""Arista EOS structured config, AVD-style keys: one function per running-config section.

The result is a typed `EosConfig` (schema.py: one frozen record per section); the field order of that
record is the order of sections in running-config (EOS's own `show running-config` order).
"""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._eos.gateway import ip_virtual_router_mac_address, vlan_interfaces
from clusterforge.render.switches._eos.interfaces import (
    ethernet_interfaces,
    loopback_interfaces,
    management_interfaces,
)
from clusterforge.render.switches._eos.qos import priority_flow_control, qos, qos_profiles
from clusterforge.render.switches._eos.routing import ip_routing, router_bgp
from clusterforge.render.switches._eos.schema import EosConfig
from clusterforge.render.switches._eos.system import hostname, vlans, vrf_instances
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["eos_structured_config"]


def eos_structured_config(facts: SwitchFacts, qos_intent: SwitchQos) -> EosConfig:
    return EosConfig(
        hostname=hostname(facts, qos_intent),
        vrf_instances=vrf_instances(facts, qos_intent),    # the management VRF exists before Management1 joins it
        qos=qos(facts, qos_intent),                        # RoCE planes: DSCP -> traffic-class maps
        priority_flow_control=priority_flow_control(facts, qos_intent),  # RoCE planes: PFC watchdog
        qos_profiles=qos_profiles(facts, qos_intent),      # RoCE planes: ETS (DWRR RoCE/default, strict CNP)
        vlans=vlans(facts, qos_intent),                    # storage leaves and access planes only
        ethernet_interfaces=ethernet_interfaces(facts, qos_intent),
        loopback_interfaces=loopback_interfaces(facts, qos_intent),
        management_interfaces=management_interfaces(facts, qos_intent),
        vlan_interfaces=vlan_interfaces(facts, qos_intent),  # SVIs with their first hops (_eos/gateway.py)
        ip_virtual_router_mac_address=ip_virtual_router_mac_address(facts, qos_intent),  # anycast (VARP) MAC
        ip_routing=ip_routing(facts, qos_intent),          # on in the default VRF, off in the management VRF
        router_bgp=router_bgp(facts, qos_intent),
    )
