"""Arista EOS's structured config as typed records: one frozen record per running-config section.

Section and field names are those of pyavd's eos_cli_config_gen input schema where it has the key
(ethernet_interfaces[].ip_address, vlan_interfaces[].ip_virtual_router_addresses, vrrp_ids[].priority_level,
ip_virtual_router_mac_address, ...), so tests/fabric/eos_avd.py maps them onto AVD's schema key for key;
running_config.py formats exactly these fields, a section per field of EosConfig in its order.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.plan.slotinit import slot_init
from clusterforge.render.switches._frr.router_bgp import RouterBgp

__all__ = ["EosDscpLine", "EosQos", "EosPriorityFlowControl", "EosTxQueue", "EosPfcWatchdog", "EosQosProfile",
           "EosVlan", "EosEthernetInterface", "EosLoopbackInterface", "EosManagementInterface", "EosVrrpIpv4",
           "EosVrrp", "EosVlanInterface", "EosIpRouting", "EosConfig", "RECORDS"]


@dataclass(frozen=True, slots=True)
class EosDscpLine:  # qos map dscp <dscps> to traffic-class <tc>
    dscps: tuple[int, ...]
    traffic_class: int


@dataclass(frozen=True, slots=True)
class EosQos:  # the DSCP map, and the per-port RoCE parts every lossless Ethernet interface writes
    dscp_to_traffic_class: tuple[EosDscpLine, ...]
    roce_priority: int
    ecn_min_bytes: int
    ecn_max_bytes: int
    ecn_probability_pct: int
    queue_keyword: str  # tx-queue or uc-tx-queue (catalog `eos_queue`)
    dcbx_mode: str = "ieee"  # `dcbx mode ieee` on every lossless port: IEEE 802.1Qaz DCBX in LLDP (PFC, ETS)


@dataclass(frozen=True, slots=True)
class EosPriorityFlowControl:  # priority-flow-control pause watchdog
    watchdog_timeout_s: str  # seconds, at most two decimals (EOS's grammar)
    watchdog_action: str


@dataclass(frozen=True, slots=True)
class EosTxQueue:  # qos profile <name> / <queue keyword> <id>
    id: int
    priority: str  # "priority strict" or "no priority"
    bandwidth_percent: int | None = None  # DWRR queues only


@dataclass(frozen=True, slots=True)
class EosPfcWatchdog:  # qos profile <name> / priority-flow-control pause watchdog [port timer | port action]
    timeout_s: str  # seconds, at most two decimals (EOS's grammar)
    polling_interval: str  # seconds, or "auto"
    recovery_time_s: str
    action: str


@dataclass(frozen=True, slots=True)
class EosQosProfile:  # qos profile <name>
    name: str
    queue_keyword: str
    tx_queues: tuple[EosTxQueue, ...]
    pfc_watchdog: EosPfcWatchdog | None = None  # the watchdog on every port that applies the profile


@dataclass(frozen=True, slots=True)
class EosVlan:  # vlan <id>
    id: int
    name: str


@slot_init  # one per port (or session) of every switch: plan/slotinit.py
@dataclass(frozen=True, slots=True)
class EosEthernetInterface:  # interface Ethernet<n>/1: routed (ip_address), access or trunk
    name: str
    description: str
    mtu: int
    speed: str | None
    lossless: bool
    ip_address: str | None = None
    access_vlan: int | None = None
    trunk_vlans: tuple[int, ...] | None = None
    service_profile: str | None = None  # lossless ports: the qos profile they apply


@dataclass(frozen=True, slots=True)
class EosLoopbackInterface:  # interface Loopback0
    name: str
    ip_address: str


@dataclass(frozen=True, slots=True)
class EosManagementInterface:  # interface Management1, and its default route in the management VRF
    name: str
    vrf: str
    ip_address: str
    gateway: str | None


@dataclass(frozen=True, slots=True)
class EosVrrpIpv4:
    address: str
    secondary_addresses: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EosVrrp:  # vlan_interfaces[].vrrp_ids[]
    id: int
    priority_level: int | None
    ipv4: EosVrrpIpv4


@dataclass(frozen=True, slots=True)
class EosVlanInterface:  # interface Vlan<id> with its first hops
    name: str
    mtu: int
    ip_address: str
    ip_address_secondaries: tuple[str, ...] = ()
    ip_virtual_router_addresses: tuple[str, ...] = ()  # anycast (VARP)
    vrrp_ids: tuple[EosVrrp, ...] = ()


@dataclass(frozen=True, slots=True)
class EosIpRouting:  # ip routing / no ip routing vrf <mgmt>
    default: bool
    mgmt_vrf: str | None


@dataclass(frozen=True, slots=True)
class EosConfig:
    """running-config's sections in EOS's own `show running-config` order (None: the section does not apply)."""

    hostname: str
    vrf_instances: tuple[str, ...] | None  # the management VRF exists before Management1 joins it
    qos: EosQos | None  # RoCE planes only, like the next two
    priority_flow_control: EosPriorityFlowControl | None
    qos_profiles: tuple[EosQosProfile, ...] | None
    vlans: tuple[EosVlan, ...] | None  # storage leaves and access planes only
    ethernet_interfaces: tuple[EosEthernetInterface, ...] | None
    loopback_interfaces: tuple[EosLoopbackInterface, ...] | None
    management_interfaces: tuple[EosManagementInterface, ...] | None
    vlan_interfaces: tuple[EosVlanInterface, ...] | None
    ip_virtual_router_mac_address: str | None  # anycast (VARP) gateways' MAC
    ip_routing: EosIpRouting
    router_bgp: RouterBgp | None


RECORDS = (EosDscpLine, EosQos, EosPriorityFlowControl, EosTxQueue, EosPfcWatchdog, EosQosProfile, EosVlan,
           EosEthernetInterface, EosLoopbackInterface, EosManagementInterface, EosVrrpIpv4, EosVrrp,
           EosVlanInterface, EosIpRouting, EosConfig)
