"""Fabric invariants over a finished Plan: pure, no I/O; each problem is one readable sentence.

check_fabric(plan) returns every problem found (empty list = the fabric is consistent):

* every (device, port) is used by at most one link;
* every link names devices in the Plan, and each end agrees with the link on plane, speed, MTU
  and address (the interface on that port, or the bond that port is a member of), and the link's
  MTU is its plane's MTU;
* every server and storage-server NIC on the data and storage planes has exactly one link;
* every two switches that carry hosts on a plane share a switch above them (fabric_reach);
* the oversubscription each sized tier achieves (sum of downlink speeds / sum of uplink speeds,
  per switch, from the links themselves) does not exceed what the plane declares.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from clusterforge.plan.fabric_reach import unreachable_pairs
from clusterforge.plan.objects import Device, Interface, Link, Plan
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["check_fabric", "cabling_problems", "tier_problems", "CHECK_PARTS", "RATIO_TOLERANCE"]

RATIO_TOLERANCE = 1e-9  # float slack when comparing achieved and declared ratios
HOST_KINDS = DeviceKind.HOSTS
CABLED_HOST_PLANES = Plane.FABRICS
_NOT_CABLED = ("Loopback0",)  # logical interfaces: never the end of a link


def check_fabric(plan: Plan) -> list[str]:
    return [problem for part in CHECK_PARTS for problem in part(plan)]


def cabling_problems(plan: Plan) -> list[str]:
    """Devices, ports, link ends and host NICs: the first half of check_fabric."""
    devices = {d.name: d for d in plan.devices}
    ends = Counter([(link.a.device, link.a.port) for link in plan.links])  # both ends of every link
    ends.update([(link.b.device, link.b.port) for link in plan.links])
    problems: list[str] = []
    problems += _unknown_devices(plan.links, devices)
    problems += _ports_used_once(ends)
    problems += _link_ends_agree(plan.links, devices)
    problems += _host_nics_cabled(plan.devices, ends)
    return problems


def tier_problems(plan: Plan) -> list[str]:
    """Oversubscription and up-down reachability: the second half of check_fabric."""
    return _oversubscription(plan, {d.name: d for d in plan.devices}) + unreachable_pairs(plan)


# check_fabric's independent halves, in order: a caller may run them apart (loading does, on two cores)
CHECK_PARTS = (cabling_problems, tier_problems)


def _describe(link: Link) -> str:
    return f"{link.a.device}:{link.a.port} <-> {link.b.device}:{link.b.port}"


def _unknown_devices(links: Iterable[Link], devices: dict[str, Device]) -> list[str]:
    return [f"link {_describe(link)} names {name}, which is not a device in the plan"
            for link in links for name in (link.a.device, link.b.device) if name not in devices]


def _ports_used_once(ends: Counter) -> list[str]:
    return [f"port {device}:{port} is used by {count} links; a port takes one cable"
            for (device, port), count in sorted(item for item in ends.items() if item[1] > 1)]


def _port_interfaces(device: Device) -> dict[str, Interface]:
    """Port name -> the interface that configures it (itself, or the bond it is a member of)."""
    out: dict[str, Interface] = {}
    for iface in device.interfaces:
        if iface.name in _NOT_CABLED:
            continue
        out.setdefault(iface.name, iface)
        for member in iface.members:
            out.setdefault(member, iface)
    return out


def _plane_mtus(devices: Iterable[Device]) -> dict[str, int]:
    """Each plane's MTU as its cabled interfaces state it (the most common value: one outlier is the problem)."""
    seen: dict[str, Counter] = defaultdict(Counter)
    for device in devices:
        for iface in device.interfaces:
            if iface.name not in _NOT_CABLED:
                seen[iface.plane][iface.mtu] += 1
    return {plane: counts.most_common(1)[0][0] for plane, counts in seen.items()}


def _link_ends_agree(links: Iterable[Link], devices: dict[str, Device]) -> list[str]:
    problems: list[str] = []
    interfaces = {name: _port_interfaces(d) for name, d in devices.items()}
    plane_mtu = _plane_mtus(devices.values())
    for link in links:
        if link.plane in plane_mtu and link.mtu != plane_mtu[link.plane]:
            problems.append(f"link {_describe(link)}: MTU {link.mtu} but the {link.plane} plane's MTU is"
                            f" {plane_mtu[link.plane]}")
        for end, address in ((link.a, link.a_ip), (link.b, link.b_ip)):
            device = devices.get(end.device)
            if device is None:
                continue
            if device.plane is not None and device.plane != link.plane:
                problems.append(f"link {_describe(link)}: {end.device} serves the {device.plane} plane, the link"
                                f" is on {link.plane}; planes are never bridged")
            iface = interfaces[end.device].get(end.port)
            if iface is None:
                continue
            if iface.plane != link.plane:
                problems.append(f"link {_describe(link)}: {end.device}:{end.port} is a {iface.plane} interface"
                                f" on a {link.plane} link")
            if iface.mtu != link.mtu:
                problems.append(f"link {_describe(link)}: {end.device}:{end.port} has MTU {iface.mtu},"
                                f" the link {link.mtu}")
            if iface.speed_gbps and iface.speed_gbps != link.speed_gbps:
                problems.append(f"link {_describe(link)}: {end.device}:{end.port} runs at {iface.speed_gbps} Gb/s,"
                                f" the link at {link.speed_gbps} Gb/s")
            if address and not iface.members and iface.ip != address:
                problems.append(f"link {_describe(link)}: {end.device}:{end.port} is addressed {iface.ip},"
                                f" the link says {address}")
    return problems


def _host_nics_cabled(devices: Iterable[Device], ends: Counter) -> list[str]:
    problems: list[str] = []
    for device in devices:
        if device.kind not in HOST_KINDS:
            continue
        for iface in device.interfaces:
            if iface.plane not in CABLED_HOST_PLANES:
                continue
            for port in iface.members or (iface.name,):
                count = ends[(device.name, port)]
                if count != 1:
                    problems.append(f"{device.name}:{port} ({iface.plane}) has {count} links; every {iface.plane}"
                                    " NIC needs exactly one")
    return problems


def _oversubscription(plan: Plan, devices: dict[str, Device]) -> list[str]:
    """Per sized tier (the keys of FabricSummary.oversubscription), the worst switch against the declaration."""
    down: Counter = Counter()
    up: Counter = Counter()
    for link in plan.links:  # a is the child end, b the parent: the link is b's downlink and a's uplink
        down[link.b.device] += link.speed_gbps
        up[link.a.device] += link.speed_gbps
    problems: list[str] = []
    for plane, summary in plan.fabric.items():
        declared = summary.declared_oversubscription
        for tier in summary.oversubscription:
            switches = [d.name for d in devices.values() if d.plane == plane and d.kind == tier and down[d.name]]
            no_uplinks = [name for name in switches if not up[name]]
            if no_uplinks:
                problems.append(f"{plane} {tier} {no_uplinks[0]} has downlinks but no uplinks"
                                f" ({len(no_uplinks)} {tier} switches like it)")
            ratios = {name: down[name] / up[name] for name in switches if up[name]}
            over = {name: r for name, r in ratios.items() if r > declared + RATIO_TOLERANCE}
            if over:
                worst = max(over, key=lambda name: (over[name], name))
                problems.append(f"{plane} {tier} {worst} is oversubscribed {over[worst]:g}:1"
                                f" ({down[worst]} Gb/s down, {up[worst]} Gb/s up); the plane declares"
                                f" {declared:g}:1 ({len(over)} {tier} switches above it)")
    return problems
