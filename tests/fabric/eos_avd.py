"""Our EOS structured config in the input schema of Arista's eos_cli_config_gen (pyavd), and a
normaliser that compares two EOS configs as trees of commands.

The mapping only renames keys into AVD's schema; every value comes from our structured config, so
pyavd renders the same decisions through Arista's own templates. What legitimately differs and is
normalised: section order (EOS accepts any), `!` separators and comments, and the same command
written at router-bgp level by us and under `address-family ipv4` by AVD.
"""

from __future__ import annotations

from typing import Any

from clusterforge.render.switches._eos.routing import EOS_BGP_TIMERS, EOS_PEER_GROUP
from clusterforge.render.switches._eos.schema import (
    EosConfig,
    EosEthernetInterface,
    EosQosProfile,
    EosTxQueue,
    EosVlanInterface,
)

__all__ = ["avd_structured_config", "config_tree"]


def _ethernet(i: EosEthernetInterface, sc: EosConfig) -> dict[str, Any]:
    out: dict[str, Any] = {"name": i.name, "mtu": i.mtu}
    if i.description:
        out["description"] = i.description
    if i.speed:
        out["speed"] = i.speed
    if i.ip_address is not None:
        out["switchport"] = {"enabled": False}
        out["ip_address"] = i.ip_address
    elif i.access_vlan is not None:
        out["switchport"] = {"enabled": True, "mode": "access", "access_vlan": i.access_vlan}
    elif i.trunk_vlans is not None:
        out["switchport"] = {"enabled": True, "mode": "trunk",
                             "trunk": {"allowed_vlan": ",".join(map(str, i.trunk_vlans))}}
    if i.lossless:
        q = sc.qos
        assert q is not None, "a lossless port on a switch without the RoCE qos section"
        out["qos"] = {"trust": "dscp"}
        if q.dcbx_mode:  # AVD's schema has no DCBX key: its raw-CLI key carries the line, rendered by AVD in place
            out["eos_cli"] = f"dcbx mode {q.dcbx_mode}"
        out["service_profile"] = i.service_profile
        out["priority_flow_control"] = {"enabled": True,
                                        "priorities": [{"priority": q.roce_priority, "no_drop": True}]}
        out[_queues_key(q.queue_keyword)] = [{"id": q.roce_priority, "random_detect": {"ecn": {"threshold": {
            "units": "bytes", "min": q.ecn_min_bytes, "max": q.ecn_max_bytes,
            "max_probability": q.ecn_probability_pct}, "count": True}}}]
    return out


def _vlan_interface(i: EosVlanInterface) -> dict[str, Any]:
    out: dict[str, Any] = {"name": i.name, "mtu": i.mtu, "ip_address": i.ip_address}
    if i.ip_address_secondaries:
        out["ip_address_secondaries"] = list(i.ip_address_secondaries)
    if i.ip_virtual_router_addresses:
        out["ip_virtual_router_addresses"] = list(i.ip_virtual_router_addresses)
    if i.vrrp_ids:
        out["vrrp_ids"] = [{"id": g.id, "priority_level": g.priority_level,
                            "ipv4": {"address": g.ipv4.address,
                                     **({"secondary_addresses": list(g.ipv4.secondary_addresses)}
                                        if g.ipv4.secondary_addresses else {})}} for g in i.vrrp_ids]
    return out


def _queues_key(keyword: str) -> str:
    return {"uc-tx-queue": "uc_tx_queues", "tx-queue": "tx_queues"}[keyword]  # AVD's keys for the two families


def _tx_queue(q: EosTxQueue) -> dict[str, Any]:
    out: dict[str, Any] = {"id": q.id, "priority": q.priority}
    if q.bandwidth_percent is not None:
        out["bandwidth_percent"] = q.bandwidth_percent
    return out


def _qos_profile(p: EosQosProfile) -> dict[str, Any]:
    out: dict[str, Any] = {"name": p.name, _queues_key(p.queue_keyword): [_tx_queue(q) for q in p.tx_queues]}
    if (wd := p.pfc_watchdog) is not None:
        out["priority_flow_control"] = {"watchdog": {
            "enabled": True, "action": wd.action,
            "timer": {"timeout": wd.timeout_s, "polling_interval": wd.polling_interval,
                      "recovery_time": wd.recovery_time_s}}}
    return out


def avd_structured_config(sc: EosConfig) -> dict[str, Any]:
    out: dict[str, Any] = {"hostname": sc.hostname}
    routing = sc.ip_routing
    out["ip_routing"] = routing.default
    if sc.vrf_instances:
        out["vrfs"] = [{"name": v, "ip_routing": v != routing.mgmt_vrf} for v in sc.vrf_instances]
    if sc.qos is not None:
        out["qos"] = {"map": {"dscp": [f"{' '.join(map(str, e.dscps))} to traffic-class {e.traffic_class}"
                                       for e in sc.qos.dscp_to_traffic_class]}}
    if sc.priority_flow_control is not None:
        pfc = sc.priority_flow_control
        out["priority_flow_control"] = {"watchdog": {"action": pfc.watchdog_action,
                                                     "timeout": pfc.watchdog_timeout_s}}
    if sc.qos_profiles is not None:
        out["qos_profiles"] = [_qos_profile(p) for p in sc.qos_profiles]
    if sc.vlans is not None:
        out["vlans"] = [{"id": v.id, "name": v.name} for v in sc.vlans]
    if sc.ethernet_interfaces is not None:
        out["ethernet_interfaces"] = [_ethernet(i, sc) for i in sc.ethernet_interfaces]
    if sc.loopback_interfaces is not None:
        out["loopback_interfaces"] = [{"name": i.name, "ip_address": i.ip_address} for i in sc.loopback_interfaces]
    for m in sc.management_interfaces or ():
        out.setdefault("management_interfaces", []).append({"name": m.name, "vrf": m.vrf, "ip_address": m.ip_address})
        if m.gateway:
            out.setdefault("static_routes", []).append({"vrf": m.vrf, "prefix": "0.0.0.0/0", "next_hop": m.gateway})
    if sc.vlan_interfaces is not None:
        out["vlan_interfaces"] = [_vlan_interface(i) for i in sc.vlan_interfaces]
    if sc.ip_virtual_router_mac_address is not None:
        out["ip_virtual_router_mac_address"] = sc.ip_virtual_router_mac_address
    if sc.router_bgp is not None:
        bgp = sc.router_bgp
        out["router_bgp"] = {
            "as": str(bgp.asn), "router_id": bgp.router_id,
            "maximum_paths": {"paths": bgp.maximum_paths, "ecmp": bgp.maximum_paths},
            "bgp_defaults": ["bgp bestpath as-path multipath-relax"],
            "timers": {"keepalive_time": EOS_BGP_TIMERS[0], "hold_time": EOS_BGP_TIMERS[1]},
            "neighbors": [{"ip_address": n.ip, "peer_group": EOS_PEER_GROUP, "remote_as": str(n.remote_as),
                           "description": n.description} for n in bgp.neighbors],
            "address_family_ipv4": {"networks": [{"prefix": p} for p in bgp.networks]},
        }
        if bgp.neighbors:
            group: dict[str, Any] = {"name": EOS_PEER_GROUP, "bfd": True}
            if bgp.maximum_routes is not None:
                group["maximum_routes"] = bgp.maximum_routes
            out["router_bgp"]["peer_groups"] = [group]
    return out


def config_tree(text: str) -> dict[str, Any]:
    """EOS config text -> {command: subtree}, order-free; `!` lines, comments and `end` dropped."""
    root: dict[str, Any] = {}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("!") or stripped == "end":
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack[-1][0] >= indent:
            stack.pop()
        node: dict[str, Any] = stack[-1][1].setdefault(stripped, {})
        stack.append((indent, node))
    bgp = next((k for k in root if k.startswith("router bgp ")), None)
    if bgp is not None:  # `network` at router level (ours) == under address-family ipv4 (AVD)
        af = root[bgp].pop("address-family ipv4", {})
        root[bgp].update(af)
    return root
