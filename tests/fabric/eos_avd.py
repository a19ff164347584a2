"""Our EOS structured config in the input schema of Arista's eos_cli_config_gen (pyavd), and a
normaliser that compares two EOS configs as trees of commands.

The mapping only renames keys into AVD's schema; every value comes from our structured config, so
pyavd renders the same decisions through Arista's own templates. What legitimately differs and is
normalised: section order (EOS accepts any), `!` separators and comments, and the same command
written at router-bgp level by us and under `address-family ipv4` by AVD.
"""

from __future__ import annotations

from typing import Any

__all__ = ["avd_structured_config", "config_tree"]


def _ethernet(i: dict[str, Any], sc: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": i["name"], "mtu": i["mtu"]}
    if i.get("description"):
        out["description"] = i["description"]
    if i.get("speed"):
        out["speed"] = i["speed"]
    if "ip_address" in i:
        out["switchport"] = {"enabled": False}
        out["ip_address"] = i["ip_address"]
    elif "access_vlan" in i:
        out["switchport"] = {"enabled": True, "mode": "access", "access_vlan": i["access_vlan"]}
    elif "trunk_vlans" in i:
        out["switchport"] = {"enabled": True, "mode": "trunk",
                             "trunk": {"allowed_vlan": ",".join(map(str, i["trunk_vlans"]))}}
    if i.get("lossless"):
        q = sc["qos"]
        out["qos"] = {"trust": "dscp"}
        out["service_profile"] = i["service_profile"]
        out["priority_flow_control"] = {"enabled": True,
                                        "priorities": [{"priority": q["roce_priority"], "no_drop": True}]}
        out[_queues_key(q["queue_keyword"])] = [{"id": q["roce_priority"], "random_detect": {"ecn": {"threshold": {
            "units": "bytes", "min": q["ecn_min_bytes"], "max": q["ecn_max_bytes"],
            "max_probability": q["ecn_probability_pct"]}}}}]
    return out


def _vlan_interface(i: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": i["name"], "mtu": i["mtu"], "ip_address": i["ip_address"]}
    if i["ip_address_secondaries"]:
        out["ip_address_secondaries"] = list(i["ip_address_secondaries"])
    if i.get("ip_virtual_router_addresses"):
        out["ip_virtual_router_addresses"] = list(i["ip_virtual_router_addresses"])
    if i.get("vrrp_ids"):
        out["vrrp_ids"] = [{"id": g["id"], "priority_level": g["priority_level"],
                            "ipv4": {"address": g["ipv4"]["address"],
                                     **({"secondary_addresses": list(g["ipv4"]["secondary_addresses"])}
                                        if g["ipv4"]["secondary_addresses"] else {})}} for g in i["vrrp_ids"]]
    return out


def _queues_key(keyword: str) -> str:
    return {"uc-tx-queue": "uc_tx_queues", "tx-queue": "tx_queues"}[keyword]  # AVD's keys for the two families


def avd_structured_config(sc: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"hostname": sc["hostname"]}
    routing = sc.get("ip_routing", {})
    out["ip_routing"] = bool(routing.get("default"))
    if sc.get("vrf_instances"):
        out["vrfs"] = [{"name": v, "ip_routing": v != routing.get("mgmt_vrf")} for v in sc["vrf_instances"]]
    if "qos" in sc:
        out["qos"] = {"map": {"dscp": [f"{' '.join(map(str, e['dscps']))} to traffic-class {e['traffic_class']}"
                                       for e in sc["qos"]["dscp_to_traffic_class"]]}}
    if "priority_flow_control" in sc:
        pfc = sc["priority_flow_control"]
        out["priority_flow_control"] = {"watchdog": {"action": pfc["watchdog_action"],
                                                     "timeout": str(pfc["watchdog_timeout_s"])}}
    if "qos_profiles" in sc:
        out["qos_profiles"] = [{"name": p["name"], _queues_key(p["queue_keyword"]): [dict(q) for q in p["tx_queues"]]}
                               for p in sc["qos_profiles"]]
    if "vlans" in sc:
        out["vlans"] = [dict(v) for v in sc["vlans"]]
    if "ethernet_interfaces" in sc:
        out["ethernet_interfaces"] = [_ethernet(i, sc) for i in sc["ethernet_interfaces"]]
    if "loopback_interfaces" in sc:
        out["loopback_interfaces"] = [dict(i) for i in sc["loopback_interfaces"]]
    for i in sc.get("management_interfaces", []):
        out.setdefault("management_interfaces", []).append(
            {"name": i["name"], "vrf": i["vrf"], "ip_address": i["ip_address"]})
        if i.get("gateway"):
            out.setdefault("static_routes", []).append(
                {"vrf": i["vrf"], "prefix": "0.0.0.0/0", "next_hop": i["gateway"]})
    if "vlan_interfaces" in sc:
        out["vlan_interfaces"] = [_vlan_interface(i) for i in sc["vlan_interfaces"]]
    if "ip_virtual_router_mac_address" in sc:
        out["ip_virtual_router_mac_address"] = sc["ip_virtual_router_mac_address"]
    if "router_bgp" in sc:
        bgp = sc["router_bgp"]
        out["router_bgp"] = {
            "as": str(bgp.asn), "router_id": bgp.router_id,
            "maximum_paths": {"paths": bgp.maximum_paths, "ecmp": bgp.maximum_paths},
            "bgp_defaults": ["bgp bestpath as-path multipath-relax"],
            "neighbors": [{"ip_address": n.ip, "remote_as": str(n.remote_as), "description": n.description}
                          for n in bgp.neighbors],
            "address_family_ipv4": {"networks": [{"prefix": p} for p in bgp.networks]},
        }
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
