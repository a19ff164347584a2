"""Arista EOS structured config, AVD-style keys: one function per running-config section."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._eos.gateway import ip_virtual_router_mac_address, vlan_interfaces
from clusterforge.render.switches._eos.interfaces import (
    ethernet_interfaces,
    loopback_interfaces,
    management_interfaces,
)
from clusterforge.render.switches._eos.qos import priority_flow_control, qos, qos_profiles
from clusterforge.render.switches._eos.routing import ip_routing, router_bgp
from clusterforge.render.switches._eos.system import hostname, vlans, vrf_instances
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["EOS_KEYS", "eos_structured_config"]

Key = Callable[[SwitchFacts, SwitchQos], Any]

# Composition order = order of sections in running-config (EOS's own `show running-config` order).
EOS_KEYS: list[tuple[str, Key]] = [
    ("hostname", hostname),
    ("vrf_instances", vrf_instances),            # the management VRF exists before Management1 joins it
    ("qos", qos),                                # RoCE planes: DSCP -> traffic-class maps
    ("priority_flow_control", priority_flow_control),  # RoCE planes: PFC watchdog
    ("qos_profiles", qos_profiles),              # RoCE planes: ETS (DWRR RoCE/default, strict CNP)
    ("vlans", vlans),                            # storage leaves and access planes only
    ("ethernet_interfaces", ethernet_interfaces),
    ("loopback_interfaces", loopback_interfaces),
    ("management_interfaces", management_interfaces),
    ("vlan_interfaces", vlan_interfaces),        # SVIs with their first hops (_eos/gateway.py)
    ("ip_virtual_router_mac_address", ip_virtual_router_mac_address),  # anycast (VARP) gateways' MAC
    ("ip_routing", ip_routing),                  # on in the default VRF, off in the management VRF
    ("router_bgp", router_bgp),
]


def eos_structured_config(facts: SwitchFacts, qos_intent: SwitchQos) -> dict[str, Any]:
    return {key: value for key, build in EOS_KEYS if (value := build(facts, qos_intent)) is not None}
