"""EosConfig -> the running-config text: one formatting function per section, in the record's order.

Plain string formatting, not templates: a leaf's running-config is mostly its Ethernet ports, and
formatting them directly costs a fraction of a template loop (and a render with no template needs no
template engine). Formatting only: every value is decided in the structured config. A section whose
field is None does not apply and writes nothing; the others end with EOS's `!` separator.
"""

from __future__ import annotations

from collections.abc import Callable

from clusterforge.render.switches._eos.routing import EOS_BGP_TIMERS, EOS_PEER_GROUP
from clusterforge.render.switches._eos.schema import (
    EosConfig,
    EosEthernetInterface,
    EosIpRouting,
    EosLoopbackInterface,
    EosManagementInterface,
    EosPriorityFlowControl,
    EosQos,
    EosQosProfile,
    EosVlan,
    EosVlanInterface,
)
from clusterforge.render.switches._frr.router_bgp import RouterBgp
from clusterforge.render.switches.header import HEADER_TEXT

__all__ = ["running_config"]


def running_config(config: EosConfig) -> str:
    out = [f"! {HEADER_TEXT}\n!\n"]
    for name, write in _SECTIONS:
        value = getattr(config, name)
        if value is not None:
            write(out, config, value)
    out.append("end\n")
    return "".join(out)


def _hostname(out: list[str], _config: EosConfig, hostname: str) -> None:
    out.append(f"hostname {hostname}\n!\n")


def _vrf_instances(out: list[str], _config: EosConfig, vrfs: tuple[str, ...]) -> None:
    out.extend(f"vrf instance {vrf}\n!\n" for vrf in vrfs)


def _qos(out: list[str], _config: EosConfig, qos: EosQos) -> None:
    out.extend(
        f"qos map dscp {' '.join(map(str, line.dscps))} to traffic-class {line.traffic_class}\n"
        for line in qos.dscp_to_traffic_class
    )
    out.append("!\n")


def _priority_flow_control(out: list[str], _config: EosConfig, pfc: EosPriorityFlowControl) -> None:
    out.append(
        f"priority-flow-control pause watchdog default timeout {pfc.watchdog_timeout_s}\n"
        f"priority-flow-control pause watchdog action {pfc.watchdog_action}\n!\n"
    )


def _qos_profiles(out: list[str], _config: EosConfig, profiles: tuple[EosQosProfile, ...]) -> None:
    for profile in profiles:
        out.append(f"qos profile {profile.name}\n")
        if (wd := profile.pfc_watchdog) is not None:
            out.append(
                "   priority-flow-control pause watchdog\n"
                f"   priority-flow-control pause watchdog port timer timeout {wd.timeout_s}"
                f" polling-interval {wd.polling_interval} recovery-time {wd.recovery_time_s}\n"
                f"   priority-flow-control pause watchdog port action {wd.action}\n"
            )
        for q in profile.tx_queues:
            out.append(f"   !\n   {profile.queue_keyword} {q.id}\n")
            if q.bandwidth_percent is not None:
                out.append(f"      bandwidth percent {q.bandwidth_percent}\n")
            out.append(f"      {q.priority}\n")
        out.append("!\n")


def _vlans(out: list[str], _config: EosConfig, vlans: tuple[EosVlan, ...]) -> None:
    out.extend(f"vlan {vlan.id}\n   name {vlan.name}\n!\n" for vlan in vlans)


def _ethernet_interfaces(out: list[str], config: EosConfig, interfaces: tuple[EosEthernetInterface, ...]) -> None:
    roce = ""  # the lines every lossless port repeats after its service profile
    if (q := config.qos) is not None:
        roce = (
            (f"   dcbx mode {q.dcbx_mode}\n" if q.dcbx_mode else "")
            + f"   priority-flow-control on\n   priority-flow-control priority {q.roce_priority} no-drop\n"
            f"   {q.queue_keyword} {q.roce_priority}\n      random-detect ecn minimum-threshold {q.ecn_min_bytes}"
            f" bytes maximum-threshold {q.ecn_max_bytes} bytes max-mark-probability {q.ecn_probability_pct}\n"
            "      random-detect ecn count\n"  # ECN-marked packet counters on the RoCE queue
        )
    append = out.append
    for i in interfaces:
        append(f"interface {i.name}\n")
        if i.description:
            append(f"   description {i.description}\n")
        append(f"   mtu {i.mtu}\n")
        if i.speed:
            append(f"   speed {i.speed}\n")
        if i.ip_address is not None:
            append(f"   no switchport\n   ip address {i.ip_address}\n")
        elif i.access_vlan is not None:
            append(f"   switchport\n   switchport mode access\n   switchport access vlan {i.access_vlan}\n")
        elif i.trunk_vlans is not None:
            append(
                f"   switchport\n   switchport mode trunk\n"
                f"   switchport trunk allowed vlan {','.join(map(str, i.trunk_vlans))}\n"
            )
        if i.lossless:
            if config.qos is None:
                raise ValueError(f"{i.name} is lossless on a switch without a qos section")
            append(f"   qos trust dscp\n   service-profile {i.service_profile}\n{roce}")
        append("!\n")


def _loopback_interfaces(out: list[str], _config: EosConfig, interfaces: tuple[EosLoopbackInterface, ...]) -> None:
    out.extend(f"interface {i.name}\n   ip address {i.ip_address}\n!\n" for i in interfaces)


def _management_interfaces(out: list[str], _config: EosConfig, interfaces: tuple[EosManagementInterface, ...]) -> None:
    for i in interfaces:
        out.append(f"interface {i.name}\n   vrf {i.vrf}\n   ip address {i.ip_address}\n!\n")
        if i.gateway:
            out.append(f"ip route vrf {i.vrf} 0.0.0.0/0 {i.gateway}\n!\n")


def _vlan_interfaces(out: list[str], _config: EosConfig, interfaces: tuple[EosVlanInterface, ...]) -> None:
    for i in interfaces:
        out.append(f"interface {i.name}\n   mtu {i.mtu}\n   ip address {i.ip_address}\n")
        out.extend(f"   ip address {address} secondary\n" for address in i.ip_address_secondaries)
        out.extend(f"   ip virtual-router address {address}\n" for address in i.ip_virtual_router_addresses)
        for group in i.vrrp_ids:
            out.append(
                f"   vrrp {group.id} priority-level {group.priority_level}\n"
                f"   vrrp {group.id} ipv4 {group.ipv4.address}\n"
            )
            out.extend(f"   vrrp {group.id} ipv4 {address} secondary\n" for address in group.ipv4.secondary_addresses)
        out.append("!\n")


def _ip_virtual_router_mac_address(out: list[str], _config: EosConfig, mac: str) -> None:
    out.append(f"ip virtual-router mac-address {mac}\n!\n")


def _ip_routing(out: list[str], _config: EosConfig, routing: EosIpRouting) -> None:
    out.append("ip routing\n" if routing.default else "no ip routing\n")
    if routing.mgmt_vrf:
        out.append(f"no ip routing vrf {routing.mgmt_vrf}\n")
    out.append("!\n")


def _router_bgp(out: list[str], _config: EosConfig, bgp: RouterBgp) -> None:
    out.append(
        f"router bgp {bgp.asn}\n   router-id {bgp.router_id}\n"
        f"   timers bgp {EOS_BGP_TIMERS[0]} {EOS_BGP_TIMERS[1]}\n"
        f"   maximum-paths {bgp.maximum_paths} ecmp {bgp.maximum_paths}\n"
        "   bgp bestpath as-path multipath-relax\n"
    )
    group = EOS_PEER_GROUP
    if bgp.neighbors:
        out.append(f"   neighbor {group} peer group\n   neighbor {group} bfd\n")
        if bgp.maximum_routes is not None:
            out.append(f"   neighbor {group} maximum-routes {bgp.maximum_routes}\n")
    out.extend(
        f"   neighbor {n.ip} peer group {group}\n"
        f"   neighbor {n.ip} remote-as {n.remote_as}\n   neighbor {n.ip} description {n.description}\n"
        for n in bgp.neighbors
    )
    out.extend(f"   network {network}\n" for network in bgp.networks)
    out.append("!\n")


# EosConfig's fields in running-config order (its declaration order), each with its formatter
_SECTIONS: tuple[tuple[str, Callable[..., None]], ...] = (
    ("hostname", _hostname),
    ("vrf_instances", _vrf_instances),
    ("qos", _qos),
    ("priority_flow_control", _priority_flow_control),
    ("qos_profiles", _qos_profiles),
    ("vlans", _vlans),
    ("ethernet_interfaces", _ethernet_interfaces),
    ("loopback_interfaces", _loopback_interfaces),
    ("management_interfaces", _management_interfaces),
    ("vlan_interfaces", _vlan_interfaces),
    ("ip_virtual_router_mac_address", _ip_virtual_router_mac_address),
    ("ip_routing", _ip_routing),
    ("router_bgp", _router_bgp),
)
