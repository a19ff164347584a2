"""The Plan's InfiniBand planes as subnets a simulator can hold: switches, HCAs and cables, pure.

One `IbSubnet` per plane whose transport is InfiniBand: every planned switch of the plane with its port
count (the catalog model's ports, numbered 1.. in the NOS's port order), one single-port HCA per server port
cabled into the plane (a DGX's rail NICs are one HCA each), and every planned cable of the plane as a
pair of (node, port number) ends. GUIDs are a pure function of the plane and the device (and port)
names, themselves pure functions of the stable ids: the same plan gives the same GUIDs, so a discovered
GUID names the planned device it stands for.

A simulator holds a bounded subnet (`SimLimits`; ibsim's built-in sizes by default). A plane larger than
that keeps its top tiers and the first scalable units that fit, in SU order, and says what it left out
(`IbSubnet.left_out`): a check of the subset never stands for the whole plane.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from clusterforge.nos import traits_for
from clusterforge.plan.objects import Device, Link, Plan
from clusterforge.vocab import DeviceKind, Plane, Transport

__all__ = ["IbNode", "IbCable", "IbSubnet", "SimLimits", "IBSIM_LIMITS", "ib_subnets", "node_guid", "port_guid",
           "NODE_ID"]

# ibsim node ids: quoted in its net file and console, '#' and '@' reserved, 64 characters at most.
NODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}")
MAX_SWITCH_PORTS = 254  # NodeInfo.NumPorts is 8 bits and port 255 is reserved
# GUID layout: 0xCF marker, a node-kind nibble, 44 bits of hash, and a low byte left for port numbers
# (ibsim gives an HCA port the node GUID + port number).
_GUID_MARKER = 0xCF << 56
_KIND_NIBBLE = {"switch": 0x1, "hca": 0x2}
_HASH_BITS = 44


@dataclass(frozen=True, slots=True)
class SimLimits:
    """How large a subnet the simulator holds (ibsim 0.10's MAXNETNODES, MAXNETSWITCHS, MAXNETPORTS)."""

    nodes: int = 2048
    switches: int = 256
    ports: int = 256 * 36 + 2048 * 2  # every switch counts its ports plus port 0, every HCA its ports


IBSIM_LIMITS = SimLimits()


@dataclass(frozen=True, slots=True)
class IbNode:
    node_id: str  # the simulator's name for it: the switch name, or "<server>/<port>" for an HCA
    kind: str  # "switch" or "hca"
    device: str  # the planned device
    port: str | None  # HCAs: the server port the HCA is
    ports: int  # port count
    guid: int
    su: int | None
    tier: str  # the device kind: leaf, spine, core, or the server's kind


@dataclass(frozen=True, slots=True)
class IbCable:
    a: tuple[str, int]  # (node id, port number)
    b: tuple[str, int]
    a_name: str  # "<device>:<port>" as planned
    b_name: str


@dataclass(frozen=True, slots=True)
class IbSubnet:
    plane: str
    nodes: tuple[IbNode, ...]  # the SM's node first (the simulator attaches the SM where the file starts)
    cables: tuple[IbCable, ...]
    planned_nodes: int  # the plane's, before fitting into the simulator
    planned_cables: int
    left_out: str | None  # None: the whole plane; else what did not fit and why

    @property
    def sm_node(self) -> IbNode:
        return self.nodes[0]

    def node(self, node_id: str) -> IbNode:
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        raise KeyError(node_id)


def _hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") >> (64 - _HASH_BITS)


def node_guid(plane: str, kind: str, device: str, port: str | None = None) -> int:
    """A node's GUID from the plane and the names the plan gives it."""
    key = f"{plane}/{device}" if port is None else f"{plane}/{device}/{port}"
    return _GUID_MARKER | _KIND_NIBBLE[kind] << 52 | _hash(key) << 8


def port_guid(node: IbNode, port: int) -> int:
    """The port GUID ibsim gives: a switch's ports share the node GUID; an HCA port is node GUID + port."""
    return node.guid if node.kind == "switch" else node.guid + port


def _switch_port_numbers(plan: Plan, device: Device) -> tuple[int, dict[str, int]]:
    """(port count, {planned port name: port number 1..}) in the NOS's port order for the switch's model."""
    model = plan.switch_models[device.model]
    count = model.ports + model.uplinks
    if count > MAX_SWITCH_PORTS:
        raise ValueError(f"{device.name}: {count} ports; an InfiniBand switch node has at most {MAX_SWITCH_PORTS}")
    traits = traits_for(plan.plane(device.plane or "").nos)
    return count, {traits.port_name(i, model.lanes_per_port): i + 1 for i in range(count)}


def _checked_id(node_id: str) -> str:
    if not NODE_ID.fullmatch(node_id):
        raise ValueError(f"{node_id!r}: not a simulator node id (letters, digits, . _ : / -, 64 at most)")
    return node_id


def _plane_subnet(plan: Plan, plane: str, links: list[Link], limits: SimLimits) -> IbSubnet:
    switches = {d.name: d for d in plan.devices if d.plane == plane and d.kind in DeviceKind.SWITCHES}
    numbers = {name: _switch_port_numbers(plan, d) for name, d in switches.items()}
    nodes: dict[str, IbNode] = {}
    for name, device in switches.items():
        nodes[name] = IbNode(_checked_id(name), "switch", name, None, numbers[name][0],
                             node_guid(plane, "switch", name), device.su, device.kind)
    cables: list[IbCable] = []
    for link in links:
        ends = []
        for end in (link.a, link.b):
            if end.device in switches:
                port = numbers[end.device][1].get(end.port)
                if port is None:
                    raise ValueError(f"{end.device}:{end.port}: not a port of {switches[end.device].model}")
                ends.append((end.device, port))
                continue
            node_id = _checked_id(f"{end.device}/{end.port}")
            if node_id not in nodes:
                device = plan.device(end.device)
                nodes[node_id] = IbNode(node_id, "hca", end.device, end.port, 1,
                                        node_guid(plane, "hca", end.device, end.port), device.su, device.kind)
            ends.append((node_id, 1))
        cables.append(IbCable(ends[0], ends[1], f"{link.a.device}:{link.a.port}", f"{link.b.device}:{link.b.port}"))
    guids = [n.guid for n in nodes.values()]
    if len(set(guids)) != len(guids):
        raise ValueError(f"plane {plane}: two nodes hash to one GUID; rename one")
    kept = _fit(list(nodes.values()), limits)
    ordered = _sm_first([n for n in nodes.values() if n.node_id in kept])
    inside = [c for c in cables if c.a[0] in kept and c.b[0] in kept]
    left_out = None
    if len(kept) < len(nodes):
        sus = sorted({n.su for n in nodes.values() if n.node_id not in kept and n.su is not None})
        left_out = (f"{len(nodes) - len(kept)} of {len(nodes)} nodes and {len(cables) - len(inside)} of "
                    f"{len(cables)} cables left out (SUs {', '.join(map(str, sus))}): the simulator holds "
                    f"{limits.nodes} nodes, {limits.switches} switches, {limits.ports} ports")
    return IbSubnet(plane, tuple(ordered), tuple(inside), len(nodes), len(cables), left_out)


def _size(nodes: Iterable[IbNode]) -> tuple[int, int, int]:
    listed = list(nodes)
    return (len(listed), sum(n.kind == "switch" for n in listed),
            sum(n.ports + (n.kind == "switch") for n in listed))


def _fits(size: tuple[int, int, int], limits: SimLimits) -> bool:
    return size[0] <= limits.nodes and size[1] <= limits.switches and size[2] <= limits.ports


def _fit(nodes: list[IbNode], limits: SimLimits) -> set[str]:
    """Node ids kept: every node when the plane fits; else the nodes outside any SU, then whole SUs in order."""
    if _fits(_size(nodes), limits):
        return {n.node_id for n in nodes}
    kept = [n for n in nodes if n.su is None]
    if not _fits(_size(kept), limits):
        return set()
    for su in sorted({n.su for n in nodes if n.su is not None}):
        more = kept + [n for n in nodes if n.su == su]
        if not _fits(_size(more), limits):
            break
        kept = more
    return {n.node_id for n in kept}


_TIER_ORDER = {DeviceKind.CORE: 0, DeviceKind.SPINE: 1, DeviceKind.LEAF: 2}


def _sm_first(nodes: list[IbNode]) -> list[IbNode]:
    """The SM's node leads: the first switch of the top tier (a managed switch's own subnet manager)."""
    switches = [n for n in nodes if n.kind == "switch"]
    if not switches:
        return nodes
    sm = min(switches, key=lambda n: _TIER_ORDER.get(n.tier, 3))
    return [sm] + [n for n in nodes if n is not sm]


def ib_subnets(plan: Plan, limits: SimLimits = IBSIM_LIMITS) -> tuple[IbSubnet, ...]:
    """One subnet per InfiniBand plane, in plane order; none for a plan without InfiniBand."""
    planes = [p for p in Plane.FABRICS if p in plan.planes and plan.plane(p).transport == Transport.INFINIBAND]
    by_plane: dict[str, list[Link]] = {p: [] for p in planes}
    for link in plan.links:
        if link.plane in by_plane:
            by_plane[link.plane].append(link)
    return tuple(_plane_subnet(plan, p, by_plane[p], limits) for p in planes)
