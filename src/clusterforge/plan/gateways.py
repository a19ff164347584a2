"""First hops: who answers the gateway each host is given, per plane (docs/gateways.md says why).

* data (RoCE/Ethernet): routed host links. Every host NIC has a /31 whose other end is the leaf
  port; the host's next hop is that port's address. Nothing to add. InfiniBand: no IP gateway.
* storage: an anycast gateway. Every switch a storage host is cabled to (the SU's leaf pair; the
  top-tier pair for storage servers, each pair its own server subnet) carries the block's .1 beside
  its own SVI address, with one virtual MAC: SONiC static anycast gateway (SAG), EOS
  `ip virtual-router` (VARP), Cumulus VRR (whose MAC is fixed: NosTraits.anycast_mac). The switches
  of a pair share no L2 segment (their uplinks are routed), so the MAC is never learnt on two ports.
* management / oob: VRRP on the top of the plane's L2 tree (the aggregation pair, or the access
  cores when there are several pairs). ToRs and aggregation switches bridge the VLAN up, so both
  top switches sit on one L2 segment: one elected master must own the virtual MAC (NVIDIA's VRR
  is for MLAG pairs; VRRP is its answer for distinct switches on one segment). One SVI carries
  every block's gateway (every envelope SU and the site block), so adding an SU changes nothing.
  A NOS without a VRRP model (SONiC: sonic-yang-models at 086b03bd70; NosTraits.vrrp) gets the
  gateway on the first top switch alone, and the plan warns.
* a plane declared `gateway: {provider: external}`: no switch renders it; the record names who
  must provide it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clusterforge.plan.context import Context
from clusterforge.plan.errors import PlanError
from clusterforge.plan.ipam import Block
from clusterforge.plan.numbering import SITE_ACCESS_OFFSET, SVI_FIRST_OFFSET
from clusterforge.plan.objects import Device, Link
from clusterforge.vocab import DeviceKind, GatewayMethod, Plane, Transport

__all__ = ["FirstHop", "PlaneGateway", "plan_gateways", "VRRP_MAX_ADDRESSES", "VRRP_MAC"]

VRRP_MAX_ADDRESSES = 64  # per virtual router: VRRPv3 adverts carry at most 255; kept well below
VRRP_MASTER_PRIORITY, VRRP_BACKUP_PRIORITY = 200, 100
VRRP_MAC = "00:00:5e:00:01:01"  # RFC 5798's virtual MAC of VRID 1


@dataclass(frozen=True, slots=True)
class FirstHop:
    """One gateway address on one switch: the SVI, the switch's own address and the shared one."""

    switch: str
    interface: str  # the SVI, e.g. Vlan120
    vlan: int
    mtu: int
    address: str  # the switch's own address on the subnet (CIDR)
    vip: str  # the gateway the hosts are given, with the subnet's prefix length
    vrid: int | None = None  # VRRP only
    priority: int | None = None  # VRRP only: the first switch is master

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class PlaneGateway:
    plane: str
    method: str  # vocab.GatewayMethod
    nos: str
    provider: str  # "fabric", or who the declaration names for an external gateway
    virtual_mac: str | None  # anycast: the shared MAC; VRRP: 00:00:5e:00:01:<vrid> (RFC 5798)
    gateways: tuple[str, ...]  # every gateway address hosts of this plane are given
    first_hops: tuple[FirstHop, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"plane": self.plane, "method": self.method, "nos": self.nos, "provider": self.provider,
                "virtual_mac": self.virtual_mac, "gateways": list(self.gateways),
                "first_hops": [h.to_dict() for h in self.first_hops]}


def anycast_mac(vlan: int) -> str:
    """A locally administered MAC per plane VLAN: 02:cf:00:00:<vlan high>:<vlan low>."""
    return f"02:cf:00:00:{vlan >> 8:02x}:{vlan & 0xFF:02x}"


def _vip(block: Block) -> str:
    return f"{block.gateway()}/{block.prefixlen}"


def _host_gateways(devices: list[Device], plane: str) -> tuple[str, ...]:
    found = {i.gateway for d in devices if d.kind in DeviceKind.HOSTS for i in d.interfaces
             if i.plane == plane and i.gateway}
    return tuple(sorted(found, key=lambda a: tuple(int(x) for x in a.split("."))))


def _storage_hops(devices: list[Device]) -> list[FirstHop]:
    """The storage SVIs the fabric planner gave each leaf (and top switch): own address, .1 shared."""
    out = []
    for d in devices:
        if d.plane != Plane.STORAGE or d.kind not in DeviceKind.SWITCHES:
            continue
        for i in d.interfaces:
            if i.vlan is not None and i.name.startswith("Vlan") and i.ip and i.gateway:
                out.append(FirstHop(d.name, i.name, i.vlan, i.mtu, i.ip, f"{i.gateway}/{i.ip.split('/')[1]}"))
    return out


def _l2_top(devices: list[Device], links: list[Link], plane: str) -> list[str]:
    """The plane's switches that bridge up to no parent: the top of the L2 tree, in Plan order."""
    children = {link.a.device for link in links if link.plane == plane and not link.a_ip}
    return [d.name for d in devices if d.plane == plane and d.kind in DeviceKind.SWITCHES and d.su is None
            and d.name not in children]


def _access_hops(ctx: Context, plane: str, top: list[str], method: str) -> list[FirstHop]:
    decl = ctx.spec.networks.plane(plane)
    blocks = [ctx.pools.su_block(plane, su) for su in range(1, ctx.spec.envelope.max_sus + 1)]
    blocks.append(ctx.pools.site_block(plane))
    if SVI_FIRST_OFFSET + len(top) > SITE_ACCESS_OFFSET:  # .8-.15 of the site block: site access switches, control
        raise PlanError([(("networks", plane), f"{len(top)} gateway switches exceed the"
                          f" {SITE_ACCESS_OFFSET - SVI_FIRST_OFFSET} SVI addresses of a block")])
    switches = top[:1] if method == GatewayMethod.SINGLE else top
    out = []
    for k, switch in enumerate(switches):
        for n, block in enumerate(blocks):
            vrrp = method == GatewayMethod.VRRP
            out.append(FirstHop(switch, f"Vlan{decl.vlan}", decl.vlan, decl.mtu, block.addr(SVI_FIRST_OFFSET + k),
                                _vip(block), 1 + n // VRRP_MAX_ADDRESSES if vrrp else None,
                                (VRRP_MASTER_PRIORITY if k == 0 else VRRP_BACKUP_PRIORITY) if vrrp else None))
    return out


def plan_gateways(ctx: Context, devices: list[Device], links: list[Link]) -> tuple[dict[str, PlaneGateway], list[str]]:
    """Per plane: the method, the gateways hosts are given, and the switch addresses that answer them."""
    out: dict[str, PlaneGateway] = {}
    warnings: list[str] = []
    for plane in Plane.values():
        decl = ctx.spec.networks.plane(plane)
        gateways = _host_gateways(devices, plane)
        external = decl.gateway.provider == "external"
        if plane == Plane.DATA:
            if external:
                raise PlanError([(("networks", plane, "gateway", "provider"), "the data plane has no gateway to"
                                  " hand to a site router (routed /31 host links, or InfiniBand); allowed: fabric")])
            method = GatewayMethod.NONE if decl.transport == Transport.INFINIBAND else GatewayMethod.ROUTED
            out[plane] = PlaneGateway(plane, method, decl.nos, "fabric", None, gateways)
            continue
        if external:
            who = decl.gateway.by or f"a router outside the declaration (networks.{plane}.gateway.by names none)"
            out[plane] = PlaneGateway(plane, GatewayMethod.EXTERNAL, decl.nos, who, None, gateways)
            continue
        if plane == Plane.STORAGE:
            hops = _storage_hops(devices)
            mac = ctx.traits(plane).anycast_mac or anycast_mac(decl.vlan)
            out[plane] = PlaneGateway(plane, GatewayMethod.ANYCAST, decl.nos, "fabric", mac, gateways, tuple(hops))
            continue
        top = _l2_top(devices, links, plane)
        traits = ctx.traits(plane)
        method = GatewayMethod.VRRP if traits.vrrp else GatewayMethod.SINGLE
        if method == GatewayMethod.SINGLE:
            warnings.append(f"networks.{plane}: {traits.label} has no VRRP model, so the {plane} gateways sit on"
                            f" {top[0]} alone (no failover); declare networks.{plane}.gateway.provider: external"
                            " to use a site router instead")
        hops = _access_hops(ctx, plane, top, method)
        mac = VRRP_MAC if method == GatewayMethod.VRRP else anycast_mac(decl.vlan)
        out[plane] = PlaneGateway(plane, method, decl.nos, "fabric", mac, gateways, tuple(hops))
    return out, warnings
