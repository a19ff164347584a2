"""Fabric planners: data (rail-optimized leaf/spine[/core]), storage, management and oob planes.

Each planner adds switches to a SwitchBuilder and returns links. Ports and addresses are pure
functions of stable ids: leaf port = node slot; spine port = global leaf ordinal x parallel links + i.
"""

from __future__ import annotations

from clusterforge.model import ScalableUnit
from clusterforge.plan.access_core import plan_access_cores
from clusterforge.plan.cables import cable_class
from clusterforge.plan.context import Context
from clusterforge.plan.errors import PlanError
from clusterforge.plan.fabric_dims import agg_groups, sus_per_agg
from clusterforge.plan.naming import (
    agg_name,
    compute_rack,
    core_name,
    data_leaf,
    mgmt_tor,
    oob_tor,
    spine_name,
    su_spine_name,
)
from clusterforge.plan.objects import Device, Endpoint, Interface, Link
from clusterforge.plan.servers import NodeSlot
from clusterforge.plan.switches import SwitchBuilder, site_ordinal
from clusterforge.plan.wiring import Uplink, data_leaf_uplink, data_spine_uplink, tor_uplink
from clusterforge.vocab import DeviceKind, LinkTier, LoopbackRole, Plane, Transport

__all__ = ["plan_data_fabric", "plan_access_planes"]


def _routed(ctx: Context, plane: str) -> bool:
    key = ("routed", plane)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = ctx.spec.networks.plane(plane).transport != Transport.INFINIBAND
    return found


def _mtu(ctx: Context, plane: str) -> int:
    key = ("mtu", plane)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = ctx.spec.networks.plane(plane).mtu
    return found


def _pname(ctx: Context, plane: str, model: str, index: int) -> str:
    key = (plane, model, index)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = _port_name(ctx, plane, model, index)
    return found


def _port_name(ctx: Context, plane: str, model: str, index: int) -> str:
    traits, switch = ctx.traits(plane), ctx.spec.catalog.switches[model]
    if traits.platform_data and switch.sonic is not None:  # the platform's own names (port_config.ini)
        ports = switch.sonic.ports()
        if index >= len(ports):
            raise PlanError([(("networks", plane), f"port {index + 1} of switch model {model!r} is beyond its"
                              f" SONiC port map ({len(ports)} ports, {switch.sonic.hwsku})")])
        return ports[index].name
    return traits.port_name(index, switch.lanes_per_port)


def _speed(ctx: Context, *models: str) -> int:
    key = ("speed", *models)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = min(ctx.spec.catalog.switches[m].speed_gbps for m in models)
    return found


def _fabric_link(ctx: Context, sw: SwitchBuilder, plane: str, tier: str, index: int | None,
                 child: str, child_port: str, parent: str, parent_port: str, speed: int) -> Link:
    mtu = _mtu(ctx, plane)
    child_ip = parent_ip = None
    if index is not None and _routed(ctx, plane):
        child_ip, parent_ip = ctx.pools.p2p(tier, index)
        sw.port(child, Interface(child_port, plane, child_ip, mtu, peer_ip=parent_ip.split("/")[0],
                                 speed_gbps=speed))
        sw.port(parent, Interface(parent_port, plane, parent_ip, mtu, peer_ip=child_ip.split("/")[0],
                                  speed_gbps=speed))
    rack_a, rack_b = sw.meta[child]["rack"], sw.meta[parent]["rack"]
    return Link(Endpoint(child, child_port), Endpoint(parent, parent_port), plane, speed, mtu,
                cable_class(rack_a, rack_b, speed), child_ip, parent_ip, tier)


def _data_spines(ctx: Context, sw: SwitchBuilder) -> None:
    """Site spines (two tiers) or cores (three tiers): sized by the envelope, built from day one."""
    models = ctx.models(Plane.DATA)
    asn = ctx.spec.networks.asn
    if ctx.data.tiers == 2:
        for j in range(ctx.data.spines):
            name = spine_name(j)
            rack, u = sw.site_position("spine", j, models.spine)
            sw.add(name, DeviceKind.SPINE, Plane.DATA, models.spine, None, rack, u,
                   sw.site_oob(site_ordinal(ctx, "spine", j)),
                   asn.spine_base if _routed(ctx, Plane.DATA) else None,
                   ctx.pools.loopback(LoopbackRole.DATA_SPINE, j) if _routed(ctx, Plane.DATA) else None)
    else:
        core_model = models.core
        for c in range(ctx.data.cores):
            name = core_name(c)
            rack, u = sw.site_position("core", c, core_model)
            sw.add(name, DeviceKind.CORE, Plane.DATA, core_model, None, rack, u,
                   sw.site_oob(site_ordinal(ctx, "core", c)),
                   asn.core if _routed(ctx, Plane.DATA) else None,
                   ctx.pools.loopback(LoopbackRole.DATA_CORE, c) if _routed(ctx, Plane.DATA) else None)


def _tor_up_port(tor_model, a: int) -> int:
    return tor_model.ports + a if tor_model.uplinks >= 2 else tor_model.ports - 2 + a


def _provisioned(ctx: Context, sw: SwitchBuilder, plane: str, tier: str, up: Uplink, child_model: str,
                 parent_model: str, child_kind: str, child_asn: int | None, speed: int | None = None) -> None:
    """The parent's end of an envelope link, cabled or not yet: address, peer and ASN as planned."""
    child_ip = parent_ip = None
    if _routed(ctx, plane) and up.p2p_index >= 0:
        child_ip, parent_ip = ctx.pools.p2p(tier, up.p2p_index)
    sw.port(up.parent, Interface(
        _pname(ctx, plane, parent_model, up.parent_port), plane, parent_ip, _mtu(ctx, plane),
        peer_ip=child_ip.split("/")[0] if child_ip else None,
        speed_gbps=speed or _speed(ctx, child_model, parent_model),
        peer_device=up.child, peer_port=_pname(ctx, plane, child_model, up.child_port), peer_kind=child_kind,
        peer_asn=child_asn))


def _provision_data_parents(ctx: Context, sw: SwitchBuilder) -> None:
    """Site spines (two tiers) or cores (three tiers) carry a port for every envelope child."""
    dims = ctx.data
    models = ctx.models(Plane.DATA)
    asn = ctx.spec.networks.asn
    routed = _routed(ctx, Plane.DATA)
    for su in range(1, ctx.spec.envelope.max_sus + 1):
        if dims.tiers == 2:
            for local in range(dims.leaves_per_su):
                glob = (su - 1) * dims.leaves_per_su + local
                for i in range(dims.uplinks_per_leaf):
                    _provisioned(ctx, sw, Plane.DATA, LinkTier.DATA_LEAF_SPINE, data_leaf_uplink(dims, su, local, i),
                                 models.leaf, models.spine, DeviceKind.LEAF,
                                 asn.leaf_base + glob if routed else None)
        else:
            for j in range(dims.spines):
                for i in range(dims.spine_uplinks):
                    _provisioned(ctx, sw, Plane.DATA, LinkTier.DATA_SPINE_CORE, data_spine_uplink(dims, su, j, i),
                                 models.spine, models.core, DeviceKind.SPINE,
                                 asn.spine_base + su if routed else None)


def _provision_aggs(ctx: Context, sw: SwitchBuilder, plane: str, per_agg: int) -> None:
    env = ctx.spec.envelope
    models = ctx.models(plane)
    tor_model = ctx.spec.catalog.switches[models.leaf]
    agg_model = ctx.spec.catalog.switches[models.spine]
    speed = min(tor_model.uplink_speed_gbps or tor_model.speed_gbps, agg_model.speed_gbps)
    for su in range(1, env.max_sus + 1):
        for r in range(1, env.max_racks_per_su + 1):
            for a in range(2):
                up = tor_uplink(plane, su, r, a, per_agg, env.max_racks_per_su, _tor_up_port(tor_model, a))
                _provisioned(ctx, sw, plane, "", up, models.leaf, models.spine, DeviceKind.MGMT_SWITCH,
                             None, speed)


def plan_data_fabric(ctx: Context, sw: SwitchBuilder, units: list[ScalableUnit],
                     slots: dict[int, list[NodeSlot]], servers: dict[str, Device]) -> list[Link]:
    spec = ctx.spec
    dims = ctx.data
    plane = spec.networks.data
    asn = spec.networks.asn
    routed = _routed(ctx, Plane.DATA)
    models = ctx.models(Plane.DATA)
    leaf_model, spine_model = models.leaf, models.spine
    up_speed = _speed(ctx, leaf_model, spine_model)
    links: list[Link] = []
    _data_spines(ctx, sw)
    _provision_data_parents(ctx, sw)
    for unit in units:
        su = unit.id
        rails = spec.catalog.servers[unit.server_model].nics.data.ports
        if rails > dims.rails:
            raise PlanError([(("scalable_units", ctx.su_index(su), "server_model"),
                              f"{unit.server_model} has {rails} data NICs; envelope.max_rails is {dims.rails}")])
        leaf_names: list[str] = []
        for rail in range(dims.rails):
            for j in range(dims.leaves_per_rail):
                local = rail * dims.leaves_per_rail + j
                glob = (su - 1) * dims.leaves_per_su + local
                name = data_leaf(su, rail, j, dims.leaves_per_rail)
                rack, u = sw.su_network_position(su, local)
                sw.add(name, DeviceKind.LEAF, Plane.DATA, leaf_model, su, rack, u, sw.su_oob(su, local),
                       asn.leaf_base + glob if routed else None,
                       ctx.pools.loopback(LoopbackRole.DATA_LEAF, glob) if routed else None, rail)
                leaf_names.append(name)
        if dims.tiers == 3:
            for j in range(dims.spines):
                name = su_spine_name(su, j)
                ordinal = dims.leaves_per_su + 2 + j
                rack, u = sw.su_network_position(su, ordinal)
                glob = (su - 1) * dims.spines + j
                sw.add(name, DeviceKind.SPINE, Plane.DATA, spine_model, su, rack, u, sw.su_oob(su, ordinal),
                       asn.spine_base + su if routed else None,
                       ctx.pools.loopback(LoopbackRole.DATA_SPINE, glob) if routed else None)
        # node NICs -> rail leaves
        for slot in slots[su]:
            server = servers[slot.name]
            leaf_index = (slot.node - 1) // dims.nodes_per_leaf
            leaf_port = (slot.node - 1) % dims.nodes_per_leaf
            for iface in server.interfaces:
                if iface.plane != Plane.DATA:
                    continue
                assert iface.rail is not None and iface.ip is not None  # server_device: every data NIC has both
                leaf = data_leaf(su, iface.rail, leaf_index, dims.leaves_per_rail)
                pname = _pname(ctx, Plane.DATA, leaf_model, leaf_port)
                leaf_ip = None
                if routed:
                    leaf_ip = f"{iface.peer_ip}/31"
                    sw.port(leaf, Interface(pname, Plane.DATA, leaf_ip, plane.mtu, peer_ip=iface.ip.split("/")[0],
                                            rail=iface.rail, speed_gbps=iface.speed_gbps))
                speed = min(iface.speed_gbps or up_speed, spec.catalog.switches[leaf_model].speed_gbps)
                links.append(Link(Endpoint(server.name, iface.name), Endpoint(leaf, pname), Plane.DATA, speed,
                                  plane.mtu, cable_class(server.rack, sw.meta[leaf]["rack"], speed),
                                  iface.ip if routed else None, leaf_ip, LinkTier.NODE_LEAF))
        # leaves -> spines (-> cores)
        for local in range(len(leaf_names)):
            for i in range(dims.uplinks_per_leaf):
                up = data_leaf_uplink(dims, su, local, i)
                links.append(_fabric_link(
                    ctx, sw, Plane.DATA, LinkTier.DATA_LEAF_SPINE, up.p2p_index,
                    up.child, _pname(ctx, Plane.DATA, leaf_model, up.child_port),
                    up.parent, _pname(ctx, Plane.DATA, spine_model, up.parent_port), up_speed))
        if dims.tiers == 3:
            core_model = models.core
            for j in range(dims.spines):
                for i in range(dims.spine_uplinks):
                    up = data_spine_uplink(dims, su, j, i)
                    links.append(_fabric_link(
                        ctx, sw, Plane.DATA, LinkTier.DATA_SPINE_CORE, up.p2p_index,
                        up.child, _pname(ctx, Plane.DATA, spine_model, up.child_port),
                        up.parent, _pname(ctx, Plane.DATA, core_model, up.parent_port),
                        _speed(ctx, spine_model, core_model)))
    return links


def plan_access_planes(ctx: Context, sw: SwitchBuilder, units: list[ScalableUnit],
                       slots: dict[int, list[NodeSlot]], servers: dict[str, Device]) -> list[Link]:
    """Management and oob: one ToR per compute rack per plane, uplinked to an aggregation pair."""
    spec = ctx.spec
    env = spec.envelope
    fac = spec.site.facility
    links: list[Link] = []
    if fac.reserved_top_u < 2:
        raise PlanError([(("site", "facility", "reserved_top_u"),
                          "needs at least 2 U for the management and oob ToR switches")])
    for plane in (Plane.MANAGEMENT, Plane.OOB):
        decl = spec.networks.plane(plane)
        if not decl.leaf_model or not decl.spine_model:
            raise PlanError([(("networks", plane), f"the {plane} plane needs leaf_model (ToR) and spine_model (agg)")])
        models = ctx.models(plane)
        tor_model = spec.catalog.switches[models.leaf]
        agg_model = spec.catalog.switches[models.spine]
        per_agg = sus_per_agg(spec)
        for g in range(agg_groups(spec)):
            for a in range(2):
                ordinal = 4 * g + a + (2 if plane == Plane.OOB else 0)
                rack, u = sw.site_position("agg", ordinal, models.spine)
                sw.add(agg_name(plane, 2 * g + a), DeviceKind.MGMT_SWITCH, plane, models.spine, None, rack, u,
                       sw.site_oob(site_ordinal(ctx, "agg", ordinal)))
        _provision_aggs(ctx, sw, plane, per_agg)
        links += plan_access_cores(ctx, sw, plane)
        for unit in units:
            su = unit.id
            per_rack = unit.rack_stride
            if per_rack + (2 if plane == Plane.OOB else 0) > tor_model.ports:
                raise PlanError([(("scalable_units", ctx.su_index(su), "nodes_per_rack"),
                                  f"{per_rack} nodes per rack exceed the {tor_model.ports} ports of the"
                                  f" {plane} ToR {models.leaf}")])
            base_ordinal = ctx.data.leaves_per_su + 2 + (ctx.data.spines if ctx.data.tiers == 3 else 0)
            for r in range(1, unit.racks + 1):
                rack = compute_rack(su, r)
                name = (mgmt_tor if plane == Plane.MANAGEMENT else oob_tor)(rack)
                ordinal = base_ordinal + (r - 1) + (env.max_racks_per_su if plane == Plane.OOB else 0)
                u = fac.rack_u - fac.reserved_top_u + (1 if plane == Plane.MANAGEMENT else 2)
                sw.add(name, DeviceKind.MGMT_SWITCH, plane, models.leaf, su, rack, u, sw.su_oob(su, ordinal))
                up_speed = tor_model.uplink_speed_gbps or tor_model.speed_gbps
                for a in range(2):
                    up = tor_uplink(plane, su, r, a, per_agg, env.max_racks_per_su, _tor_up_port(tor_model, a))
                    speed = min(up_speed, agg_model.speed_gbps)
                    links.append(Link(Endpoint(name, _pname(ctx, plane, models.leaf, up.child_port)),
                                      Endpoint(up.parent, _pname(ctx, plane, models.spine, up.parent_port)),
                                      plane, speed, decl.mtu, cable_class(rack, sw.meta[up.parent]["rack"], speed),
                                      tier=LinkTier.TOR_AGG))
            for slot in slots[su]:
                server = servers[slot.name]
                iface = next((i for i in server.interfaces if i.plane == plane), None)
                if iface is None:
                    continue
                tor = (mgmt_tor if plane == Plane.MANAGEMENT else oob_tor)(slot.rack_name)
                speed = min(iface.speed_gbps or tor_model.speed_gbps, tor_model.speed_gbps)
                tor_port = _pname(ctx, plane, models.leaf, slot.slot - 1)
                links.append(Link(Endpoint(server.name, iface.name), Endpoint(tor, tor_port), plane, speed, decl.mtu,
                                  cable_class(server.rack, server.rack, speed), tier=LinkTier.NODE_TOR))
    return links
