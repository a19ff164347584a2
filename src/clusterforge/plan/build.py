"""plan_cluster: the one composition of all planners, in an explicit order.

1. fabric dimensions (envelope arithmetic)      -> fabric_dims
2. address pools (needs the dimensions)         -> ipam
3. servers (identity, placement, addresses)     -> servers
4. data, storage, management and oob fabrics    -> fabric (switches + links)
5. racks, PDUs and facility limits              -> facility (needs every placed device)
6. bill of materials and summary                -> bom
7. monitoring (scrape targets, disk)             -> monitoring (needs the hosts, storage mounts and Slurm)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING

from clusterforge.model import ClusterSpec, Loc
from clusterforge.nos import NOS_TRAITS, NosTraits
from clusterforge.plan.bom import bill_of_materials
from clusterforge.plan.context import Context
from clusterforge.plan.control_nodes import plan_control_nodes
from clusterforge.plan.errors import PlanError
from clusterforge.plan.fabric import plan_access_planes, plan_data_fabric
from clusterforge.plan.fabric_dims import access_cores, agg_groups, data_dims, storage_dims
from clusterforge.plan.facility import plan_racks, rack_budget, server_feed_warning
from clusterforge.plan.facts import management_vrf, plane_attrs, server_facts, site_facts, switch_models
from clusterforge.plan.gateways import plan_gateways
from clusterforge.plan.ipam import SITE_PDU_RACKS, build_pools
from clusterforge.plan.liquid import plan_cooling
from clusterforge.plan.monitoring import plan_monitoring
from clusterforge.plan.naming import RackMeta, compute_rack, pdu_name
from clusterforge.plan.objects import Device, FabricSummary, Plan
from clusterforge.plan.qos import host_roce, switch_qos
from clusterforge.plan.rackscale import nvlink_domains, power_shelf_problems, rack_trays, tray_load
from clusterforge.plan.records import Summary
from clusterforge.plan.servers import node_slots, server_device
from clusterforge.plan.services import plan_services
from clusterforge.plan.site_access import plan_site_access, provision_site_access
from clusterforge.plan.storage_fabric import plan_storage_fabric, plan_storage_servers
from clusterforge.plan.switches import SITE_CATEGORIES, SwitchBuilder
from clusterforge.plan.topology import scheduler_topology
from clusterforge.vocab import DeviceKind, LinkTier, Plane

if TYPE_CHECKING:
    from clusterforge.plan.baremetal import BmcFacts
    from clusterforge.plan.kubernetes import KubernetesPlan
    from clusterforge.plan.queueing import QueueingPlan
    from clusterforge.plan.records import HostRoce
    from clusterforge.plan.slurm import SlurmPlan
    from clusterforge.plan.topology import SchedulerTopology

__all__ = ["plan_cluster"]



def _pdu_addresses(ctx: Context, rack_meta: dict[str, RackMeta]) -> dict[str, str | None]:
    """Every PDU a rack may get (pdus_per_side pairs), addressed by stable ids only.

    Pair 1 keeps the original layout; pair k sits one pair-region further (an SU's compute and network
    racks, or the site racks), so neither adding an SU nor adding a pair renumbers an existing PDU.
    """
    pools = ctx.pools
    env = ctx.spec.envelope
    site_switches = ((ctx.data.spines if ctx.data.tiers == 2 else 0) + ctx.data.cores + ctx.storage.site_switches
                     + 4 * agg_groups(ctx.spec) + 2 * access_cores(ctx.spec))
    categories = (*SITE_CATEGORIES[:4], "storage", *SITE_CATEGORIES[4:], "control")  # PDU ordinals never move
    su_region = 2 * (env.max_racks_per_su + 4)
    out: dict[str, str | None] = {}
    for rack, meta in rack_meta.items():
        su, index, number = meta.su, meta.index, meta.number
        for pair in range(1, ctx.spec.site.facility.pdus_per_side + 1):
            for f, feed in enumerate(("A", "B")):
                name = pdu_name(rack, feed, pair)
                if meta.role == "compute":
                    assert su is not None  # a compute rack is in an SU (naming.RackMeta)
                    out[name] = pools.su_block(Plane.OOB, su).addr(pools.su_pdu_offset + su_region * (pair - 1)
                                                                   + 2 * (index - 1) + f)
                elif meta.role == "network":
                    assert su is not None and number is not None  # a network rack: an SU's, numbered
                    out[name] = (pools.su_block(Plane.OOB, su).addr(pools.su_pdu_offset + su_region * (pair - 1)
                                 + 2 * (env.max_racks_per_su + number - 1) + f) if number <= 4 else None)
                else:
                    assert meta.category is not None and number is not None  # a site rack: a category's, numbered
                    ordinal = categories.index(meta.category) * 4 + number - 1
                    offset = (pools.site_switch_offset + site_switches + 2 * SITE_PDU_RACKS * (pair - 1)
                              + 2 * ordinal + f)
                    out[name] = (pools.site_block(Plane.OOB).addr(offset)
                                 if number <= 4 and ordinal < SITE_PDU_RACKS else None)
    return out


def plan_cluster(spec: ClusterSpec, nos_traits: Mapping[str, NosTraits] = NOS_TRAITS) -> Plan:
    """The Plan of a declaration. `nos_traits` is what the planners know of each NOS (nos/: port spelling,
    VRRP, platform data); they read it and never a NOS name."""
    data = data_dims(spec)
    storage = storage_dims(spec)
    pools = build_pools(spec, data, storage)
    ctx = Context(spec, data, storage, pools, rack_budget(spec), nos_traits)
    units = sorted(spec.scalable_units, key=lambda unit: unit.id)
    warnings: list[str] = list(data.notes)
    slots = {unit.id: list(node_slots(unit)) for unit in units}
    servers: dict[str, Device] = {}
    rack_meta: dict[str, RackMeta] = {}
    problems: list[tuple[Loc, str]] = []
    for unit in units:
        index = ctx.su_index(unit.id)
        model = spec.catalog.servers[unit.server_model]
        usable = spec.site.facility.rack_u - spec.site.facility.reserved_top_u
        if unit.rack_stride * model.height_u > usable:
            problems.append((("scalable_units", index, "nodes_per_rack"),
                             f"{unit.rack_stride} x {model.height_u} U servers need {unit.rack_stride * model.height_u}"
                             f" U; a rack offers {usable} U below its ToR switches"))
        warning = server_feed_warning(unit.server_model, model.psu.count, model.psu.rating_w, model.max_draw_w)
        if warning and warning not in warnings:
            warnings.append(warning)
        for r in range(1, unit.racks + 1):
            rack_meta[compute_rack(unit.id, r)] = RackMeta(unit.id, r, "compute", ("scalable_units", index,
                                                                                  "nodes_per_rack"))
        for slot in slots[unit.id]:
            servers[slot.name] = server_device(ctx, unit, slot)
    if problems:
        raise PlanError(problems)
    sw = SwitchBuilder(ctx)
    links = plan_data_fabric(ctx, sw, units, slots, servers)
    links += plan_storage_fabric(ctx, sw, units, slots, servers)
    storage_devices, storage_links = plan_storage_servers(ctx, sw)
    links += storage_links
    control_devices = plan_control_nodes(ctx, sw)
    links += plan_access_planes(ctx, sw, units, slots, servers)
    provision_site_access(ctx, sw)
    links += plan_site_access(ctx, sw, storage_devices + control_devices)
    rack_meta.update(sw.rack_meta)
    devices = list(servers.values()) + storage_devices + control_devices + sw.devices()
    pdu_ips = _pdu_addresses(ctx, rack_meta)
    trays = rack_trays(spec, units)
    racks, pdus, problems, rack_warnings = plan_racks(spec, devices, rack_meta, pdu_ips, tray_load(trays))
    problems += power_shelf_problems(spec, {rack.name: rack.power_w for rack in racks})
    cooling, cooling_problems = plan_cooling(spec, racks, devices)
    problems += cooling_problems
    if problems:
        raise PlanError(problems)
    warnings += rack_warnings
    gateways, gateway_warnings = plan_gateways(ctx, devices, links)
    warnings += gateway_warnings
    services, service_warnings = plan_services(spec, devices)
    warnings += service_warnings
    bom = bill_of_materials(spec, devices, links, pdus, cooling.bom + _rack_system_lines(spec))
    domains = tuple(nvlink_domains(spec, units, _hosts_by_rack(servers.values()), trays))
    kinds = Counter(d.kind for d in devices)
    scheduler = scheduler_topology(devices, links, data.tiers, domains)
    roce = host_roce(spec)
    kubernetes = _kubernetes(ctx, devices, scheduler)
    fabric = _fabric_summaries(ctx, devices, links)
    slurm = _slurm(spec, devices, scheduler, roce)
    queueing = _queueing(spec, kubernetes)
    monitoring = plan_monitoring(spec, devices, services.storage.mounts,
                                 tuple(c.name for c in slurm.controllers) if slurm else (),
                                 roce.pfc_priority if roce.enabled else None,
                                 kueue=queueing is not None and queueing.enabled)
    summary = Summary(
        gpus=sum(d.gpus for d in devices), servers=kinds[DeviceKind.SERVER], storage_servers=kinds[DeviceKind.STORAGE],
        switches=sum(v for k, v in kinds.items() if k not in DeviceKind.HOSTS), racks=len(racks), pdus=len(pdus),
        links=len(links), power_kw=round(sum(d.power_w for d in devices) / 1000, 2),
        scalable_units=tuple(unit.id for unit in units),
    )
    return Plan(
        cluster=spec.name, site=spec.site.name, devices=tuple(devices), racks=tuple(racks), pdus=tuple(pdus),
        links=tuple(links), fabric=fabric, pools=_pools_report(ctx), bom=bom, qos=switch_qos(spec),
        host_roce=roce, summary=summary, services=services, warnings=tuple(warnings),
        planes=plane_attrs(spec), management_vrf=management_vrf(spec), servers=server_facts(spec, devices),
        switch_models=switch_models(spec, devices), site_facts=site_facts(spec), gateways=gateways,
        rack_trays=tuple(trays),
        nvlink_domains=domains, scheduler=scheduler, schedulers=tuple(spec.schedulers),
        slurm=slurm, monitoring=monitoring, kubernetes=kubernetes, queueing=queueing,
        cooling=cooling if spec.site.facility.cooling.liquid_loop else None, bmcs=_bmcs(spec, devices),
        state_split=spec.state.split,
    )


def _kubernetes(ctx: Context, devices: list[Device], scheduler: SchedulerTopology) -> KubernetesPlan | None:
    spec = ctx.spec
    if "kubernetes" not in spec.schedulers:
        return None
    from clusterforge.plan.kubernetes import plan_kubernetes

    facts = server_facts(spec, devices)
    models = {d.name: facts[d.model].gpu_model for d in devices if d.kind == DeviceKind.SERVER and d.model in facts}
    return plan_kubernetes(spec, ctx.pools, devices, models, scheduler, spec.networks.management.mtu)


def _queueing(spec: ClusterSpec, kubernetes: KubernetesPlan | None) -> QueueingPlan | None:
    if kubernetes is None:
        return None
    from clusterforge.plan.queueing import TeamLimits, plan_queueing

    if spec.kubernetes.kueue:  # Kueue counts every DRA device class as nvidia.com/gpu (plan/dra.py)
        from clusterforge.plan.dra import kueue_mapping_problem

        problem = kueue_mapping_problem(kubernetes.device_classes)
        if problem is not None:
            raise PlanError([(("kubernetes", "kueue"), problem)])
    return plan_queueing(spec.name, kubernetes.nodes, (TeamLimits(t.name, t.gpus, t.borrowing_limit_gpus,
                                                                  t.lending_limit_gpus) for t in spec.teams),
                          enabled=spec.kubernetes.kueue)


# Slurm and bare metal are planned for the declarations that have them; their planners (and their records'
# dataclasses) are imported then, not on every start of `validate`.
def _slurm(spec: ClusterSpec, devices: list[Device], scheduler: SchedulerTopology, roce: HostRoce) -> SlurmPlan | None:
    if "slurm" not in spec.schedulers:
        return None
    from clusterforge.plan.slurm import plan_slurm

    return plan_slurm(spec, devices, scheduler, roce)


def _bmcs(spec: ClusterSpec, devices: list[Device]) -> dict[str, BmcFacts]:
    if not spec.baremetal.models and not any(unit.management for unit in spec.scalable_units):  # none managed
        return {}
    from clusterforge.plan.baremetal import bmc_facts

    return bmc_facts(spec, devices)


def _rack_system_lines(spec) -> tuple[tuple[str, str, int, float], ...]:
    """Rack-scale systems are bought as racks: one BOM line per system (its trays are priced in it)."""
    racks: Counter = Counter()
    for unit in spec.scalable_units:
        if unit.rack_system:
            racks[unit.rack_system] += unit.racks
    return tuple(("rack-system", name, count, spec.catalog.rack_systems[name].price)
                 for name, count in sorted(racks.items()))


def _hosts_by_rack(servers) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for device in sorted(servers, key=lambda d: (d.rack or "", d.ru or 0)):
        out.setdefault(device.rack or "", []).append(device.name)
    return out


def _fabric_summaries(ctx: Context, devices: list[Device], links: list) -> dict[str, FabricSummary]:
    spec = ctx.spec
    by_plane: Counter[tuple[str | None, str]] = Counter((d.plane, d.kind) for d in devices if d.plane)
    tors = {link.a.device for link in links if link.tier == LinkTier.TOR_AGG}  # the SUs' and the site access switches
    for d_ in devices:  # access planes: ToRs are their leaves, the aggregation pair their spines
        if d_.kind == DeviceKind.MGMT_SWITCH:
            by_plane[(d_.plane, DeviceKind.LEAF if d_.name in tors else DeviceKind.SPINE)] += 1
    link_count = Counter(link.plane for link in links)
    out: dict[str, FabricSummary] = {}
    d = ctx.data
    down: Counter = Counter()
    up: Counter = Counter()
    for link in links:  # a is the child end, b the parent end of every link
        down[(link.plane, link.b.device)] += link.speed_gbps
        up[(link.plane, link.a.device)] += link.speed_gbps
    kinds = {device.name: device.kind for device in devices}
    for plane_name in Plane.values():
        plane = spec.networks.plane(plane_name)
        reserved_gbps = 0
        if plane_name == Plane.DATA and plane.leaf_model:
            reserved_gbps = plane.reserved_leaf_ports * spec.catalog.switches[plane.leaf_model].speed_gbps
        plane_ratios: dict[str, float] = {}
        for (p, name), up_gbps in up.items():
            tier = kinds.get(name)
            if p != plane_name or tier not in (DeviceKind.LEAF, DeviceKind.SPINE) or not up_gbps:
                continue
            ratio = (down[(p, name)] + (reserved_gbps if tier == DeviceKind.LEAF else 0)) / up_gbps
            plane_ratios[tier] = round(max(plane_ratios.get(tier, 0.0), ratio), 3)
        if plane_name in Plane.FABRICS:
            worst = max(plane_ratios.values(), default=0.0)
            if worst > plane.oversubscription + 1e-9:
                raise PlanError([(("networks", plane_name, "oversubscription"),
                                  f"achieved oversubscription {worst:g}:1 exceeds the declared"
                                  f" {plane.oversubscription:g}:1 ({plane_ratios})")])
        tiers = {"data": d.tiers, "storage": ctx.storage.tiers}.get(plane_name, 2)
        leaves = by_plane[(plane_name, DeviceKind.LEAF)]
        out[plane_name] = FabricSummary(
            plane_name, plane.transport, plane.nos, tiers, leaves, by_plane[(plane_name, DeviceKind.SPINE)],
            by_plane[(plane_name, DeviceKind.CORE)], plane_ratios, plane.oversubscription, link_count[plane_name],
            d.notes if plane_name == Plane.DATA else (),
            *((d.spine_groups, d.rails_per_group) if plane_name == Plane.DATA else ()),
        )
    return out


def _pools_report(ctx: Context) -> dict:
    return ctx.pools.usage


__all__ += ["PlanError"]
