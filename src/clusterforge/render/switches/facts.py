"""Switch facts: what each switch's renderers may read, indexed once from the Plan.

Nothing here decides anything. A port's address, peer and speed are read from the Plan's
interfaces and links; plane attributes (NOS, transport, VLAN, MTU, VRF, lossless) from the Plan's plane records.
The index is built in one pass over the links and one over the devices (``link_index``), so rendering
every switch stays linear in the size of the Plan; each switch's facts are then a pure function of
its Device and that index (``switch_facts``), so switches can be rendered apart (fanout.py).
"""

from __future__ import annotations

import re
import socket
import struct
from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple

from clusterforge.model.sonic_ports import SonicPlatform
from clusterforge.plan import Device, Interface, Plan
from clusterforge.plan.gateways import FirstHop, PlaneGateway
from clusterforge.vocab import DeviceKind

__all__ = ["PortFacts", "SwitchFacts", "LinkIndex", "fabric_facts", "link_index", "switch_facts", "switch_nos",
           "switch_nos_of", "SWITCH_KINDS", "port_sort_key", "network_of", "address_of"]

SWITCH_KINDS = DeviceKind.SWITCHES
MGMT_INTERFACE = "eth0"
LOOPBACK_INTERFACE = "Loopback0"
_DIGITS = re.compile(r"\d+")


def port_sort_key(name: str) -> tuple:
    """Ethernet8 before Ethernet16, swp2 before swp10, 1/2 before 2/1."""
    key = _SORT_KEYS.get(name)
    if key is None:
        key = (_DIGITS.sub("", name), tuple(int(n) for n in _DIGITS.findall(name)))
        if len(_SORT_KEYS) < 65_536:  # port names repeat on every switch of a model
            _SORT_KEYS[name] = key
    return key


_SORT_KEYS: dict[str, tuple] = {}


def address_of(cidr: str) -> str:
    return cidr.split("/", 1)[0]


def network_of(cidr: str) -> str:
    """10.0.0.5/31 -> 10.0.0.4/31 (IPv4: the Plan is IPv4-only; the model rejects anything else)."""
    address, length = cidr.split("/", 1)
    bits = int(length)
    mask = (0xFFFFFFFF << (32 - bits)) & 0xFFFFFFFF
    value = struct.unpack("!I", socket.inet_aton(address))[0] & mask
    return f"{socket.inet_ntoa(struct.pack('!I', value))}/{bits}"


class PortFacts(NamedTuple):
    """One front-panel port: its link (if cabled) and its routed interface (if any).

    A named tuple, not a frozen dataclass: a 512-SU plan has a million ports, and a tuple is built
    several times faster; it is as immutable."""

    name: str
    speed_gbps: int | None
    mtu: int
    ip: str | None = None  # CIDR, routed ports only
    peer_ip: str | None = None
    peer_device: str | None = None
    peer_port: str | None = None
    peer_kind: str | None = None
    peer_asn: int | None = None
    direction: str = ""  # "down": toward servers / children; "up": toward parents
    tier: str = ""

    @property
    def faces_host(self) -> bool:
        return self.peer_kind in DeviceKind.HOSTS

    @property
    def description(self) -> str:
        return f"{self.peer_device}:{self.peer_port}" if self.peer_device else ""


@dataclass(frozen=True, slots=True)
class SwitchFacts:
    device: Device
    nos: str
    transport: str
    plane_vlan: int
    plane_mtu: int
    mgmt_vrf: str
    lossless: bool  # the plane carries RoCE: PFC/ECN/ETS tables apply
    mgmt: Interface | None
    loopback: Interface | None
    svis: tuple[Interface, ...]
    ports: tuple[PortFacts, ...]
    sonic_platform: SonicPlatform | None = None  # the switch model's SONiC port map (catalog)
    gateway: PlaneGateway | None = None  # the plane's first-hop decision (plan/gateways.py)
    first_hops: tuple[FirstHop, ...] = ()  # the gateway addresses this switch answers
    eos_queue: str = "tx-queue"  # the model's EOS egress queue keyword (catalog `eos_queue`)
    nvue_syntax: str = "5.15"  # Cumulus: the plane's declared NVUE syntax
    lane_gbps: float | None = None  # the model's SerDes lane rate: its port speed over its lanes per port
    lanes_per_port: int = 8
    plane_prefixes: int = 0  # LinkIndex.plane_prefixes of the switch's plane

    @property
    def gateway_svis(self) -> dict[str, tuple[FirstHop, ...]]:
        """The first hops grouped by SVI, in SVI order."""
        out: dict[str, list[FirstHop]] = {}
        for hop in self.first_hops:
            out.setdefault(hop.interface, []).append(hop)
        return {name: tuple(hops) for name, hops in sorted(out.items(), key=lambda kv: port_sort_key(kv[0]))}

    @property
    def name(self) -> str:
        return self.device.name

    @property
    def routed_ports(self) -> tuple[PortFacts, ...]:
        return tuple(p for p in self.ports if p.ip)

    @property
    def bgp_peers(self) -> tuple[PortFacts, ...]:
        """Routed ports whose far end is a switch with an ASN: one eBGP session each."""
        return tuple(p for p in self.ports if p.ip and p.peer_ip and p.peer_asn is not None)

    @property
    def host_subnets(self) -> tuple[str, ...]:
        """Subnets this switch originates toward hosts: server-facing /31s and SVI subnets."""
        routed = [network_of(p.ip) for p in self.ports if p.ip and p.faces_host]
        return tuple(routed + [network_of(s.ip) for s in self.svis if s.ip])

    @property
    def uplinks(self) -> tuple[PortFacts, ...]:
        return tuple(p for p in self.ports if p.direction == "up")

    @property
    def access_ports(self) -> tuple[PortFacts, ...]:
        """Host-facing ports without an address: members of the plane's VLAN, untagged."""
        return tuple(p for p in self.ports if p.faces_host and not p.ip)

    @property
    def trunk_ports(self) -> tuple[PortFacts, ...]:
        """Switch-to-switch ports without an address (access planes): carry the plane's VLAN tagged."""
        return tuple(p for p in self.ports if not p.ip and p.peer_device and not p.faces_host)


class _End(NamedTuple):
    """One end of a link as its switch sees it (a tuple: a million of them at 512 SUs)."""

    port: str
    peer_device: str
    peer_port: str
    speed_gbps: int
    mtu: int
    direction: str
    tier: str


class LinkIndex(NamedTuple):
    """What every switch's facts read besides its own Device: the ends of its links, every device by name."""

    ends: dict[str, list[_End]]
    devices: dict[str, Device]
    first_hops: dict[str, list[FirstHop]] = {}
    plane_prefixes: dict[str, int] = {}  # per plane: the prefixes its BGP speakers originate (loopbacks, host subnets)


def link_index(plan: Plan) -> LinkIndex:
    """One pass over the links and one over the devices."""
    ends: dict[str, list[_End]] = defaultdict(list)
    for link in plan.links:
        # a is the child end (server, leaf, ToR), b the parent (leaf, spine, core, agg)
        ends[link.a.device].append(_End(link.a.port, link.b.device, link.b.port, link.speed_gbps, link.mtu,
                                        "up", link.tier))
        ends[link.b.device].append(_End(link.b.port, link.a.device, link.a.port, link.speed_gbps, link.mtu,
                                        "down", link.tier))
    hops: dict[str, list[FirstHop]] = defaultdict(list)
    for gateway in plan.gateways.values():
        for hop in gateway.first_hops:
            hops[hop.switch].append(hop)
    prefixes: dict[str, int] = defaultdict(int)
    for device in plan.devices:
        if device.asn is not None and device.plane:
            # addressed interfaces without a BGP peer: the loopback, host-facing /31s, SVIs (what router_bgp
            # originates; the management port, where it is one, counts too: an upper bound)
            prefixes[device.plane] += sum(1 for i in device.interfaces if i.ip and i.peer_asn is None)
    return LinkIndex(dict(ends), {d.name: d for d in plan.devices}, dict(hops), dict(prefixes))


def fabric_facts(plan: Plan) -> dict[str, SwitchFacts]:
    """Facts for every switch in the Plan, keyed by switch name, in Plan order."""
    index = link_index(plan)
    return {device.name: switch_facts(plan, index, device) for device in plan.devices
            if device.kind in SWITCH_KINDS}


def _plane_of(device: Device) -> str:
    if device.plane is None:
        raise ValueError(f"{device.name}: a switch with no plane")  # the planners give every switch one
    return device.plane


def switch_nos_of(plan: Plan, device: Device) -> str:
    """The NOS a switch's files are written for: its plane's (SwitchFacts.nos)."""
    return plan.plane(_plane_of(device)).nos


def switch_nos(plan: Plan) -> dict[str, str]:
    """Switch name -> switch_nos_of, in Plan order, without the rest of the facts (export device-types needs
    only this; all the facts were 2 s of CPU at 512 SUs)."""
    return {device.name: switch_nos_of(plan, device) for device in plan.devices if device.kind in SWITCH_KINDS}


def switch_facts(plan: Plan, index: LinkIndex, device: Device) -> SwitchFacts:
    """One switch's facts: its interfaces, and its links' far ends as the index records them."""
    kinds = index.devices
    decl = plan.plane(_plane_of(device))
    mgmt = loopback = None
    svis: list[Interface] = []
    routed: dict[str, Interface] = {}
    for iface in device.interfaces:
        if iface.name == MGMT_INTERFACE:
            mgmt = iface
        elif iface.name == LOOPBACK_INTERFACE:
            loopback = iface
        elif iface.vlan is not None and iface.name.lower().startswith("vlan"):
            svis.append(iface)
        else:
            routed[iface.name] = iface
    ports: dict[str, PortFacts] = {}
    for name, iface in routed.items():  # provisioned for the whole envelope: cabled or not, the same config
        if iface.peer_device:
            ports[name] = PortFacts(name, iface.speed_gbps, iface.mtu, iface.ip, iface.peer_ip, iface.peer_device,
                                    iface.peer_port, iface.peer_kind, iface.peer_asn, "down")
    for end in index.ends.get(device.name, ()):
        if end.port in ports:
            continue
        own = routed.get(end.port)
        peer = kinds.get(end.peer_device)
        ports[end.port] = PortFacts(
            end.port, end.speed_gbps, end.mtu, own.ip if own else None, own.peer_ip if own else None,
            end.peer_device, end.peer_port, peer.kind if peer else None, peer.asn if peer else None,
            end.direction, end.tier)
    for name, iface in routed.items():  # routed interfaces without a cable (none today; kept visible)
        if name not in ports:
            ports[name] = PortFacts(name, iface.speed_gbps, iface.mtu, iface.ip, iface.peer_ip)
    return SwitchFacts(
        device, decl.nos, decl.transport, decl.vlan, decl.mtu, plan.management_vrf, decl.lossless,
        mgmt, loopback, tuple(sorted(svis, key=lambda i: port_sort_key(i.name))),
        tuple(sorted(ports.values(), key=lambda p: port_sort_key(p.name))),
        plan.switch_models[device.model].sonic if device.model in plan.switch_models else None,
        plan.gateways.get(device.plane) if device.plane else None, tuple(index.first_hops.get(device.name, ())),
        plan.switch_models[device.model].eos_queue if device.model in plan.switch_models else "tx-queue",
        decl.nvue_syntax,
        *_lanes(plan, device),
        index.plane_prefixes.get(device.plane, 0) if device.plane else 0,
    )


def _lanes(plan: Plan, device: Device) -> tuple[float | None, int]:
    model = plan.switch_models.get(device.model)
    if model is None:
        return None, 8
    return model.speed_gbps / model.lanes_per_port, model.lanes_per_port
