"""What the Plan puts into the source of truth: one Want per object, in dependency order.

Pure: (spec, plan, device types) in, Wants out. A Want names its object by a natural key and its
references by (kind, key); sync.py resolves them to server ids. Fields in ``once`` are written on
create only: they are as-built facts the data centre team owns afterwards (status, asset tag).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from clusterforge.export.devicetypes import DeviceType
from clusterforge.model import ClusterSpec
from clusterforge.plan import Plan

__all__ = ["Ref", "Want", "cluster_tag", "desired"]

_VIRTUAL_PREFIXES = ("Loopback", "Vlan")
_PHASE = {1: "single-phase", 3: "three-phase"}
_TAGGED = ["dcim.rack", "dcim.device", "dcim.interface", "dcim.cable", "ipam.prefix",
           "ipam.ipaddress", "dcim.powerpanel", "dcim.powerfeed"]


@dataclass(frozen=True)
class Ref:
    kind: str
    key: tuple


@dataclass
class Want:
    kind: str
    key: tuple
    fields: dict[str, Any]
    once: dict[str, Any] = field(default_factory=dict)


def cluster_tag(plan: Plan) -> str:
    return f"clusterforge-{plan.cluster}"


def _device_role(kind: str) -> str:
    return {"mgmt-switch": "management-switch"}.get(kind, kind)


def _type_wants(device_types: list[DeviceType]) -> list[Want]:
    wants: list[Want] = []
    for manufacturer in sorted({t.manufacturer for t in device_types}):
        wants.append(Want("manufacturer", (manufacturer,), {"name": manufacturer}))
    for t in device_types:
        d = t.data
        type_key = (t.manufacturer, d["model"])
        wants.append(Want("device-type", type_key, {
            "manufacturer": Ref("manufacturer", (t.manufacturer,)), "model": d["model"],
            "part_number": d.get("part_number", ""), "u_height": d["u_height"], "is_full_depth": d["is_full_depth"],
            "comments": d.get("comments", ""),
        }))
        for iface in d.get("interfaces", []):
            wants.append(Want("interface-template", (*type_key, iface["name"]), {
                "device_type": Ref("device-type", type_key), "name": iface["name"], "type": iface["type"],
                "mgmt_only": iface.get("mgmt_only", False),
            }))
        for port in d.get("power-ports", []):
            wants.append(Want("power-port-template", (*type_key, port["name"]), {
                "device_type": Ref("device-type", type_key), "name": port["name"], "type": port["type"],
                "maximum_draw": port.get("maximum_draw"),
            }))
        for outlet in d.get("power-outlets", []):
            wants.append(Want("power-outlet-template", (*type_key, outlet["name"]), {
                "device_type": Ref("device-type", type_key), "name": outlet["name"], "type": outlet["type"],
                "power_port_template": Ref("power-port-template", (*type_key, outlet["power_port"])),
                "feed_leg": outlet.get("feed_leg", ""),
            }))
    return wants


def desired(spec: ClusterSpec, plan: Plan, device_types: list[DeviceType], nos_of: dict[str, str]) -> list[Want]:
    """Every object of the Plan, dependencies first."""
    tag = cluster_tag(plan)
    tags = [Ref("tag", (tag,))]
    site = plan.site
    type_of = {t.key: (t.manufacturer, t.data["model"]) for t in device_types}
    wants: list[Want] = [
        Want("tag", (tag,), {"name": tag}, once={"content_types": _TAGGED}),
        Want("location-type", ("Site",), {"name": "Site"}, once={"content_types": [
            "dcim.device", "dcim.rack", "dcim.rackgroup", "dcim.powerpanel", "ipam.prefix"]}),
        Want("location", (site,), {"name": site, "location_type": Ref("location-type", ("Site",))},
             once={"status": "Active"}),
        *[Want("role", (role,), {"name": role}, once={"content_types": ["dcim.device"]})
          for role in sorted({_device_role(d.kind) for d in plan.devices} | ({"pdu"} if plan.pdus else set()))],
        *_type_wants(device_types),
    ]
    for su in sorted({r.su for r in plan.racks if r.su is not None}):
        name = f"{plan.cluster}-su{su:02d}"
        wants.append(Want("rack-group", (name,), {"name": name, "location": Ref("location", (site,))}))
    for rack in plan.racks:
        group = Ref("rack-group", (f"{plan.cluster}-su{rack.su:02d}",)) if rack.su is not None else None
        wants.append(Want("rack", (rack.name,), {
            "name": rack.name, "location": Ref("location", (site,)), "rack_group": group, "u_height": rack.rack_u,
            "tags": tags}, once={"status": "Planned"}))
    for device in plan.devices:
        manufacturer_model = type_of[(device.model, nos_of.get(device.name, ""))]
        wants.append(Want("device", (device.name,), {
            "name": device.name, "device_type": Ref("device-type", manufacturer_model),
            "role": Ref("role", (_device_role(device.kind),)), "location": Ref("location", (site,)),
            "rack": Ref("rack", (device.rack,)) if device.rack else None,
            "position": device.ru if device.rack else None, "face": "front" if device.rack else "",
            "tags": tags}, once={"status": "Planned", "asset_tag": device.asset_id}))
    for pdu in plan.pdus:
        wants.append(Want("device", (pdu.name,), {
            "name": pdu.name, "device_type": Ref("device-type", type_of[(pdu.model, "")]),
            "role": Ref("role", ("pdu",)), "location": Ref("location", (site,)), "rack": Ref("rack", (pdu.rack,)),
            "position": None, "face": "", "tags": tags}, once={"status": "Planned", "asset_tag": pdu.asset_id}))
    wants += _interfaces(plan, tags)
    wants += _cables(plan, tags)
    wants += _addresses(plan, tags)
    wants += _power(spec, plan, tags)
    return wants


def _interfaces(plan: Plan, tags: list[Ref]) -> list[Want]:
    wants: list[Want] = []
    for device in plan.devices:
        for iface in device.interfaces:
            virtual = iface.members or iface.name.startswith(_VIRTUAL_PREFIXES)
            fields: dict[str, Any] = {"device": Ref("device", (device.name,)), "name": iface.name, "mtu": iface.mtu}
            if virtual:
                fields |= {"type": "lag" if iface.members else "virtual", "tags": tags}
            wants.append(Want("interface", (device.name, iface.name), fields, once={"status": "Active"}))
            for member in iface.members:
                wants.append(Want("interface", (device.name, member), {
                    "device": Ref("device", (device.name,)), "name": member, "mtu": iface.mtu,
                    "lag": Ref("interface", (device.name, iface.name))}, once={"status": "Active"}))
    return wants


def _cables(plan: Plan, tags: list[Ref]) -> list[Want]:
    wants = []
    for link in plan.links:
        a, b = (link.a.device, link.a.port), (link.b.device, link.b.port)
        wants.append(Want("cable", (a, b), {
            "termination_a_type": "dcim.interface", "termination_a_id": Ref("interface", a),
            "termination_b_type": "dcim.interface", "termination_b_id": Ref("interface", b),
            "label": f"{link.plane}:{link.tier}", "tags": tags}, once={"status": "Planned"}))
    return wants


def _strictly_inside(network: ipaddress.IPv4Network | ipaddress.IPv6Network,
                     pool: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    """A smaller subnet of ``pool`` (of the same IP version)."""
    if isinstance(network, ipaddress.IPv4Network) and isinstance(pool, ipaddress.IPv4Network):
        return network.subnet_of(pool) and network != pool
    if isinstance(network, ipaddress.IPv6Network) and isinstance(pool, ipaddress.IPv6Network):
        return network.subnet_of(pool) and network != pool
    return False


def _subnets(plan: Plan) -> dict[str, set[ipaddress.IPv4Network | ipaddress.IPv6Network]]:
    """Pool -> the subnets its interface addresses sit in (host routes, /32 and /128, are no subnet)."""
    pools = {name: ipaddress.ip_network(pool["pool"], strict=False) for name, pool in plan.pools.items()}
    found: dict[str, set] = {name: set() for name in pools}
    for device in plan.devices:
        for iface in device.interfaces:
            if not iface.ip:
                continue
            network = ipaddress.ip_interface(iface.ip).network
            if network.prefixlen == network.max_prefixlen:
                continue
            for name, pool in pools.items():
                if _strictly_inside(network, pool):
                    found[name].add(network)
    return found


def _addresses(plan: Plan, tags: list[Ref]) -> list[Want]:
    """Prefixes so Nautobot's utilisation reads true: a pool whose addresses sit in subnets is a container of
    "network" prefixes (each counts its addresses); a pool of host addresses (loopbacks) is a "pool" prefix,
    which counts the addresses directly. A container alone counts only child prefixes: it read 0 % used."""
    wants = [Want("namespace", ("Global",), {"name": "Global"})]
    subnets = _subnets(plan)
    for name, pool in sorted(plan.pools.items()):
        kind = "container" if subnets[name] else "pool"
        wants.append(Want("prefix", (pool["pool"],), {
            "prefix": pool["pool"], "type": kind, "namespace": Ref("namespace", ("Global",)),
            "description": f"{plan.cluster} {name} pool", "tags": tags}, once={"status": "Active"}))
    for network in sorted({n for nets in subnets.values() for n in nets}, key=lambda n: (n.version, n)):
        wants.append(Want("prefix", (str(network),), {
            "prefix": str(network), "type": "network", "namespace": Ref("namespace", ("Global",)),
            "description": f"{plan.cluster} subnet", "tags": tags}, once={"status": "Active"}))
    seen: set[str] = set()
    for device in plan.devices:
        for iface in device.interfaces:
            if not iface.ip or iface.ip in seen:
                continue
            seen.add(iface.ip)
            wants.append(Want("ip-address", (iface.ip,), {"address": iface.ip, "tags": tags},
                              once={"status": "Active", "namespace": Ref("namespace", ("Global",))}))
            wants.append(Want("ip-assignment", (iface.ip, device.name, iface.name), {
                "ip_address": Ref("ip-address", (iface.ip,)),
                "interface": Ref("interface", (device.name, iface.name))}))
    return wants


def _power(spec: ClusterSpec, plan: Plan, tags: list[Ref]) -> list[Want]:
    feed = spec.site.facility.feed
    wants = []
    for side in sorted({f for rack in plan.racks for f in rack.feeds}):
        panel = f"{plan.cluster}-panel-{side}"
        wants.append(Want("power-panel", (panel,), {"name": panel, "location": Ref("location", (plan.site,)),
                                                    "tags": tags}))
    for rack in plan.racks:
        for side in rack.feeds:
            panel = f"{plan.cluster}-panel-{side}"
            name = f"{rack.name}-feed-{side.lower()}"
            wants.append(Want("power-feed", (panel, name), {
                "name": name, "power_panel": Ref("power-panel", (panel,)), "rack": Ref("rack", (rack.name,)),
                "supply": "ac", "phase": _PHASE.get(feed.phases, "three-phase"), "voltage": int(feed.voltage_v),
                "amperage": int(feed.amperage_a), "max_utilization": int(feed.max_utilisation * 100), "tags": tags,
            }, once={"status": "Active"}))
    for pdu in plan.pdus:
        panel = f"{plan.cluster}-panel-{pdu.feed}"
        feed_key = (panel, f"{pdu.rack}-feed-{pdu.feed.lower()}")
        wants.append(Want("power-cable", (feed_key, pdu.name), {
            "termination_a_type": "dcim.powerfeed", "termination_a_id": Ref("power-feed", feed_key),
            "termination_b_type": "dcim.powerport", "termination_b_id": Ref("power-port", (pdu.name, "inlet")),
            "tags": tags}, once={"status": "Planned"}))
    return wants
