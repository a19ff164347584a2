"""Storage plane: a leaf pair per SU; site storage spines (two tiers) or pod spines under storage cores
(three tiers, when the envelope's leaves do not fit one spine tier); storage servers on the top tier.

Parents provision a port for every envelope child (spines for every leaf, cores for every pod
spine), so adding an SU only creates: its leaves, and its pod's spines when it opens a pod.
"""

from __future__ import annotations

from clusterforge.model import ScalableUnit
from clusterforge.plan.cables import cable_class
from clusterforge.plan.context import Context
from clusterforge.plan.errors import PlanError
from clusterforge.plan.fabric import _fabric_link, _pname, _provisioned, _routed, _speed
from clusterforge.plan.naming import (
    RackMeta,
    storage_core,
    storage_leaf,
    storage_pod_spine,
    storage_server,
    storage_spine,
)
from clusterforge.plan.numbering import NODE_OFFSET, STORAGE_ASN_OFFSET, STORAGE_LEAF_ASN_OFFSET, SVI_FIRST_OFFSET
from clusterforge.plan.objects import Device, Endpoint, Interface, Link
from clusterforge.plan.servers import NodeSlot
from clusterforge.plan.switches import SwitchBuilder, site_ordinal
from clusterforge.plan.wiring import storage_leaf_uplink, storage_server_port, storage_spine_uplink
from clusterforge.vocab import DeviceKind, LinkTier, LoopbackRole, Plane

__all__ = ["plan_storage_fabric", "plan_storage_servers", "STORAGE_ASN_OFFSET", "STORAGE_LEAF_ASN_OFFSET"]



def _leaf_asn(ctx: Context, su: int, k: int) -> int | None:
    glob = (su - 1) * ctx.storage.leaves_per_su + k
    return ctx.spec.networks.asn.leaf_base + STORAGE_LEAF_ASN_OFFSET + glob if _routed(ctx, Plane.STORAGE) else None


def _pod_spine_asn(ctx: Context, pod: int) -> int | None:
    return ctx.spec.networks.asn.spine_base + STORAGE_ASN_OFFSET + 1 + pod if _routed(ctx, Plane.STORAGE) else None


def _top_asn(ctx: Context, s: int) -> int | None:
    """The storage cores share one ASN; two-tier spine pair p has its own (the first pair's is the cores' ASN),
    so a storage server's traffic to another pair's servers may cross a leaf (docs/storage-fabric.md)."""
    if not _routed(ctx, Plane.STORAGE):
        return None
    pair = 0 if ctx.storage.tiers == 3 else s // 2
    return ctx.spec.networks.asn.spine_base + STORAGE_ASN_OFFSET + pair


def _top_switches(ctx: Context, sw: SwitchBuilder) -> None:
    """Site storage spines (two tiers) or storage cores (three tiers); each switch of a pair that takes storage
    servers answers that pair's server subnet (an SVI, the subnet's .1 shared by the pair)."""
    spec = ctx.spec
    plane = spec.networks.storage
    models = ctx.models(Plane.STORAGE)
    dims = ctx.storage
    routed = _routed(ctx, Plane.STORAGE)
    three = dims.tiers == 3
    model = models.core if three else models.spine
    count = dims.cores if three else dims.spines
    for s in range(count):
        name = storage_core(s) if three else storage_spine(s)
        category = "storage-core" if three else "storage-spine"
        rack, u = sw.site_position(category, s, model)
        sw.add(name, DeviceKind.CORE if three else DeviceKind.SPINE, Plane.STORAGE, model, None, rack, u,
               sw.site_oob(site_ordinal(ctx, category, s)), _top_asn(ctx, s),
               ctx.pools.loopback(LoopbackRole.STORAGE_CORE if three else "storage-spine", s) if routed else None)
        pair, member = (0, s) if three else divmod(s, 2)
        serves = s < dims.server_cores if three else pair < dims.server_pairs
        if routed and spec.storage.servers and serves:
            block = ctx.pools.server_block(pair)
            sw.port(name, Interface(f"Vlan{plane.vlan}", Plane.STORAGE, block.addr(SVI_FIRST_OFFSET + member),
                                    plane.mtu, plane.vlan, gateway=block.gateway()))


def _pod_spines(ctx: Context, sw: SwitchBuilder, pod: int) -> list[Link]:
    """Three tiers: the spines of one pod, each provisioning every envelope leaf of the pod; their core links."""
    spec = ctx.spec
    models = ctx.models(Plane.STORAGE)
    dims = ctx.storage
    core_model = models.core
    links: list[Link] = []
    for j in range(dims.spines):
        ordinal = pod * dims.spines + j
        rack, u = sw.site_position("storage-spine", ordinal, models.spine)
        sw.add(storage_pod_spine(pod, j), DeviceKind.SPINE, Plane.STORAGE, models.spine, None, rack, u,
               sw.site_oob(site_ordinal(ctx, "storage-spine", ordinal)), _pod_spine_asn(ctx, pod),
               ctx.pools.loopback(LoopbackRole.STORAGE_SPINE, pod * dims.spines + j)
               if _routed(ctx, Plane.STORAGE) else None)
    for su in range(pod * dims.sus_per_pod + 1, min((pod + 1) * dims.sus_per_pod, spec.envelope.max_sus) + 1):
        for k in range(dims.leaves_per_su):
            for i in range(dims.uplinks_per_leaf):
                up = storage_leaf_uplink(dims, spec.envelope.max_nodes_per_su, su, k, i)
                _provisioned(ctx, sw, Plane.STORAGE, LinkTier.STORAGE_LEAF_SPINE, up, models.leaf,
                             models.spine, DeviceKind.LEAF, _leaf_asn(ctx, su, k))
    for j in range(dims.spines):
        for i in range(dims.spine_uplinks):
            up = storage_spine_uplink(dims, pod, j, i)
            links.append(_fabric_link(
                ctx, sw, Plane.STORAGE, LinkTier.STORAGE_SPINE_CORE, up.p2p_index,
                up.child, _pname(ctx, Plane.STORAGE, models.spine, up.child_port),
                up.parent, _pname(ctx, Plane.STORAGE, core_model, up.parent_port), _speed(ctx, models.spine,
                                                                                      core_model)))
    return links


def _provision_top(ctx: Context, sw: SwitchBuilder) -> None:
    """The top tier's end of every envelope child link: leaves (two tiers) or pod spines (three)."""
    spec = ctx.spec
    dims = ctx.storage
    models = ctx.models(Plane.STORAGE)
    if dims.tiers == 2:
        for su in range(1, spec.envelope.max_sus + 1):
            for k in range(dims.leaves_per_su):
                for i in range(dims.uplinks_per_leaf):
                    up = storage_leaf_uplink(dims, spec.envelope.max_nodes_per_su, su, k, i)
                    _provisioned(ctx, sw, Plane.STORAGE, LinkTier.STORAGE_LEAF_SPINE, up, models.leaf,
                                 models.spine, DeviceKind.LEAF, _leaf_asn(ctx, su, k))
        return
    core_model = models.core
    for pod in range(dims.pods):
        for j in range(dims.spines):
            for i in range(dims.spine_uplinks):
                _provisioned(ctx, sw, Plane.STORAGE, LinkTier.STORAGE_SPINE_CORE, storage_spine_uplink(dims, pod, j, i),
                             models.spine, core_model, DeviceKind.SPINE, _pod_spine_asn(ctx, pod))


def plan_storage_fabric(ctx: Context, sw: SwitchBuilder, units: list[ScalableUnit],
                        slots: dict[int, list[NodeSlot]], servers: dict[str, Device]) -> list[Link]:
    spec = ctx.spec
    plane = spec.networks.storage
    models = ctx.models(Plane.STORAGE)
    dims = ctx.storage
    routed = _routed(ctx, Plane.STORAGE)
    leaf_model = models.leaf
    parent_model = models.spine
    up_speed = _speed(ctx, leaf_model, parent_model)
    links: list[Link] = []
    _top_switches(ctx, sw)
    _provision_top(ctx, sw)
    if dims.tiers == 3:
        for pod in sorted({(unit.id - 1) // dims.sus_per_pod for unit in units}):
            links += _pod_spines(ctx, sw, pod)
    for unit in units:
        su = unit.id
        block = ctx.pools.su_block(Plane.STORAGE, su)
        for k in range(dims.leaves_per_su):
            local = ctx.data.leaves_per_su + k
            glob = (su - 1) * dims.leaves_per_su + k
            name = storage_leaf(su, k)
            rack, u = sw.su_network_position(su, local)
            sw.add(name, DeviceKind.LEAF, Plane.STORAGE, leaf_model, su, rack, u, sw.su_oob(su, local),
                   _leaf_asn(ctx, su, k),
                   ctx.pools.loopback(LoopbackRole.STORAGE_LEAF, glob) if routed else None)
            if routed:  # each leaf of the pair has its own SVI address; the gateway .1 is their shared VIP
                svi = block.addr(SVI_FIRST_OFFSET + k)
                sw.port(name, Interface(f"Vlan{plane.vlan}", Plane.STORAGE, svi, plane.mtu, plane.vlan,
                                        gateway=block.gateway()))
            for i in range(dims.uplinks_per_leaf):
                up = storage_leaf_uplink(dims, spec.envelope.max_nodes_per_su, su, k, i)
                links.append(_fabric_link(
                    ctx, sw, Plane.STORAGE, LinkTier.STORAGE_LEAF_SPINE, up.p2p_index,
                    up.child, _pname(ctx, Plane.STORAGE, leaf_model, up.child_port),
                    up.parent, _pname(ctx, Plane.STORAGE, parent_model, up.parent_port), up_speed))
        for slot in slots[su]:
            server = servers[slot.name]
            bond = next((i for i in server.interfaces if i.plane == Plane.STORAGE), None)
            if bond is None:
                continue
            for k, member in enumerate(bond.members[: dims.leaves_per_su]):
                leaf = storage_leaf(su, k)
                pname = _pname(ctx, Plane.STORAGE, leaf_model, slot.node - 1)
                speed = min(bond.speed_gbps or up_speed, spec.catalog.switches[leaf_model].speed_gbps)
                links.append(Link(Endpoint(server.name, member), Endpoint(leaf, pname), Plane.STORAGE, speed, plane.mtu,
                                  cable_class(server.rack, sw.meta[leaf]["rack"], speed), tier=LinkTier.NODE_LEAF))
    return links


def plan_storage_servers(ctx: Context, sw: SwitchBuilder) -> tuple[list[Device], list[Link]]:
    """Parallel file-system servers in site racks, two ports each to one pair of the storage top tier."""
    from clusterforge.plan.facility import psu_feeds, series_position
    from clusterforge.plan.naming import asset_id, site_rack

    spec = ctx.spec
    st = spec.storage
    if not st.servers:
        return [], []
    if st.servers > spec.envelope.storage_servers_max:
        raise PlanError([(("storage", "servers"), f"{st.servers} storage servers exceed"
                          f" envelope.storage_servers_max={spec.envelope.storage_servers_max}")])
    if st.server_model is None:
        raise PlanError([(("storage", "server_model"), f"{st.servers} storage servers need a server_model")])
    model = spec.catalog.servers[st.server_model]
    plane = spec.networks.storage
    models = ctx.models(Plane.STORAGE)
    top_model = models.core if ctx.storage.tiers == 3 else models.spine
    site_mgmt = ctx.pools.site_block(Plane.MANAGEMENT)
    site_oob = ctx.pools.site_block(Plane.OOB)
    devices, links = [], []
    for s in range(st.servers):
        name = storage_server(s)
        pair, position = ctx.storage.server_pair(s)
        stor = ctx.pools.server_block(pair)  # the subnet of the top-switch pair its two ports land on
        number, u = series_position(s, model.height_u, model.max_draw_w, ctx.budget)
        rack = site_rack("storage", number)
        sw.rack_meta[rack] = RackMeta(None, number, "site", ("storage", "servers"), "storage", number)
        ifaces = [
            Interface("mgmt0", Plane.MANAGEMENT, site_mgmt.addr(NODE_OFFSET + s), spec.networks.management.mtu,
                      spec.networks.management.vlan, gateway=site_mgmt.gateway()),
            Interface("bond0", Plane.STORAGE, stor.addr(NODE_OFFSET + position), plane.mtu, plane.vlan,
                      gateway=stor.gateway(), members=("stor0", "stor1")),
            Interface("bmc", Plane.OOB, site_oob.addr(NODE_OFFSET + s), spec.networks.oob.mtu, spec.networks.oob.vlan,
                      gateway=site_oob.gateway()),
        ]
        devices.append(Device(name, DeviceKind.STORAGE, st.server_model, None, rack, u, model.height_u,
                              model.max_draw_w, model.weight_kg, asset_id(ctx.site, name), tuple(ifaces),
                              psu_feeds(model.psu.count)))
        for k in range(2):
            top, index = storage_server_port(ctx.storage, 2 * s + k)
            sport = _pname(ctx, Plane.STORAGE, top_model, index)
            speed = min(model.nics.storage.speed_gbps, spec.catalog.switches[top_model].speed_gbps)
            links.append(Link(Endpoint(name, f"stor{k}"), Endpoint(top, sport), Plane.STORAGE, speed, plane.mtu,
                              cable_class(rack, sw.meta[top]["rack"], speed), tier=LinkTier.SERVER_SPINE))
    return devices, links
