"""No black holes: every switch that answers a host subnet attaches every host addressed in it.

A switch with an address in a subnet installs it as a connected route and its routing protocol
advertises it (render/switches/_frr/router_bgp.py: a switch originates every subnet it serves
hosts on). Every ECMP next hop toward a host therefore ends at a switch that answers the host's
subnet, which then resolves the host on its own ports. The path delivers exactly when that switch
reaches the host: cabled to one of the host's NICs (or bond members), or through the plane's L2
switches (unaddressed switch-to-switch links: the management and oob access trees). So one fact,
checked for every plane, proves that every path toward every host delivers:

* every subnet answered by a switch (an address on a routed fabric switch's own plane, or a
  first-hop gateway it carries) is answered only by switches that reach every host whose address
  lies in it.

Second fact: storage servers on different top-switch pairs reach each other through a storage
leaf (top switch -> leaf -> top switch). eBGP drops a path carrying the receiver's own ASN, so the
two pairs must have different ASNs and share a child leaf (docs/storage-fabric.md).

Each problem is located at the declared field that places the host: storage.servers for storage
servers, the plane otherwise. Pure, on a finished Plan.
"""

from __future__ import annotations

import socket
import struct
from collections import defaultdict

from clusterforge.model.cluster import Loc
from clusterforge.plan.objects import Device, Plan
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["black_holes", "storage_pair_problems", "prefix_problems"]

_MASKS = [(0xFFFFFFFF << (32 - n)) & 0xFFFFFFFF for n in range(33)]


def _parse(cidr: str) -> tuple[int, int]:
    """(network as an int, prefix length) of an address in CIDR form."""
    address, _, length = cidr.partition("/")
    n = int(length or 32)
    return struct.unpack("!I", socket.inet_aton(address))[0] & _MASKS[n], n


def _net_str(net: tuple[int, int]) -> str:
    return f"{socket.inet_ntoa(struct.pack('!I', net[0]))}/{net[1]}"


def _host_loc(device: Device, plane: str) -> Loc:
    return ("storage", "servers") if device.kind == DeviceKind.STORAGE else ("networks", plane)


def prefix_problems(plan: Plan) -> list[tuple[Loc, str]]:
    return black_holes(plan) + storage_pair_problems(plan)


def _l2_components(plan: Plan, switches: set[str]) -> dict[str, int]:
    """Switch -> its L2 segment: switches joined by unaddressed switch-to-switch links of one plane."""
    parent = {name: name for name in switches}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for link in plan.links:
        if link.a_ip or link.b_ip or link.a.device not in switches or link.b.device not in switches:
            continue
        parent[find(link.a.device)] = find(link.b.device)
    ids: dict[str, int] = {}
    return {name: ids.setdefault(find(name), len(ids)) for name in switches}


def black_holes(plan: Plan) -> list[tuple[Loc, str]]:
    devices = {d.name: d for d in plan.devices}
    hosts = frozenset(DeviceKind.HOSTS)
    switch_kinds = frozenset(DeviceKind.SWITCHES)
    switches = {d.name for d in plan.devices if d.kind in DeviceKind.SWITCHES}
    segment = _l2_components(plan, switches)
    # (host, NIC or bond) -> the L2 segments of the switches it is cabled to
    bond_of = {(d.name, member): iface.name for d in plan.devices if d.kind in hosts
               for iface in d.interfaces for member in iface.members}
    reaches: dict[tuple[str, str], set[int]] = defaultdict(set)
    for link in plan.links:
        for host_end, switch_end in ((link.a, link.b), (link.b, link.a)):
            if switch_end.device in segment and host_end.device in devices \
                    and devices[host_end.device].kind in hosts:
                nic = bond_of.get((host_end.device, host_end.port), host_end.port)
                reaches[(host_end.device, nic)].add(segment[switch_end.device])
    # (plane, subnet) -> the hosts addressed in it
    addressed: dict[tuple[str, tuple[int, int]], list[tuple[str, str]]] = defaultdict(list)
    for d in plan.devices:
        if d.kind in hosts:
            for iface in d.interfaces:
                if iface.ip:
                    addressed[(iface.plane, _parse(iface.ip))].append((d.name, iface.name))
    # (plane, subnet) -> the switches that answer it
    answered: dict[tuple[str, tuple[int, int]], list[str]] = defaultdict(list)
    for d in plan.devices:
        if d.name not in segment or d.plane not in Plane.FABRICS:
            continue
        for iface in d.interfaces:
            # a routed fabric switch's own plane (a switch's management port is an oob/management host
            # address); its ports toward other switches hold no host
            if iface.ip and iface.peer_kind not in switch_kinds and iface.plane == d.plane \
                    and not iface.name.startswith("Loopback"):
                key = (iface.plane, _parse(iface.ip))
                if key in addressed:
                    answered[key].append(d.name)
    for plane, gateway in plan.gateways.items():
        for hop in gateway.first_hops:
            key = (plane, _parse(hop.vip))
            if key in addressed and hop.switch not in answered[key]:
                answered[key].append(hop.switch)
    problems: list[tuple[Loc, str]] = []
    for (plane, net), answering in answered.items():
        for host, nic in addressed[(plane, net)]:
            missing = [s for s in answering if segment[s] not in reaches.get((host, nic), ())]
            if missing:
                others = f" (and {len(missing) - 1} more switches)" if len(missing) > 1 else ""
                problems.append((_host_loc(devices[host], plane),
                                 f"the {plane} plane: {missing[0]}{others} answers {_net_str(net)}, the subnet of"
                                 f" {host}:{nic}, but is not cabled to it, so every ECMP path through"
                                 f" {missing[0]} toward {host} is a black hole; a subnet must be answered only by"
                                 " switches that attach all its hosts"))
                break  # one sentence per subnet
    return problems


def storage_pair_problems(plan: Plan) -> list[tuple[Loc, str]]:
    """Storage servers on different top switches: a leaf below both, and different ASNs for the two sides."""
    devices = {d.name: d for d in plan.devices}
    tops: dict[str, set[str]] = defaultdict(set)  # storage server -> its top switches
    children: dict[str, set[str]] = defaultdict(set)  # top switch -> its child switches
    for link in plan.links:
        if link.plane != Plane.STORAGE:
            continue
        a, b = devices.get(link.a.device), devices.get(link.b.device)
        if a is None or b is None:
            continue
        if a.kind == DeviceKind.STORAGE:
            tops[a.name].add(b.name)
        elif a.kind in DeviceKind.SWITCHES and b.kind in DeviceKind.SWITCHES:
            children[b.name].add(a.name)
    groups: dict[frozenset[str], str] = {}
    for server, switches in tops.items():
        groups.setdefault(frozenset(switches), server)
    problems: list[tuple[Loc, str]] = []
    distinct = list(groups.items())
    for i, (up_x, x) in enumerate(distinct):
        for up_y, y in distinct[i + 1:]:
            if not up_x.isdisjoint(up_y):
                continue
            asns_x = {devices[s].asn for s in up_x}
            asns_y = {devices[s].asn for s in up_y}
            shared = set().union(*(children[s] for s in up_x)) & set().union(*(children[s] for s in up_y))
            if not shared or not asns_x.isdisjoint(asns_y):
                why = ("no leaf below both" if not shared else
                       f"both sides share ASN {min(asns_x & asns_y, key=lambda a: a or 0)}, so eBGP drops the"
                       " path through a leaf")
                problems.append((("storage", "servers"),
                                 f"the storage plane: {x} (on {', '.join(sorted(up_x))}) and {y} (on"
                                 f" {', '.join(sorted(up_y))}) have no path between them: {why}"))
                return problems
    return problems
