"""Site access switches: the management and oob ports of the hosts outside the SUs (storage servers, control nodes).

Every compute rack has a management and an oob ToR. The hosts in site racks get site access switches, one
per plane in the reserved top U of the first storage rack (else the first control rack), as the reference
architecture's management rack carries its own in-band and out-of-band switches (switch t of a plane sits
in site host rack t + 1). They are sized by the envelope: storage_servers_max + CONTROL_NODES_MAX host
ports per plane. Site host h (storage server s: h = s; control node i: h = storage_servers_max + i) is on site switch
h // ports, port h % ports, so adding a storage server or a control node only adds a cable (and, for the
first host on a switch, that switch).

Each site access switch sends one uplink to each switch of its plane's top pair: the aggregation pair when
the envelope has one, on the ports after every envelope ToR's; the access cores when it has several, on the
ports after every aggregation switch's. The parents provision those ports from day one (once the envelope
has site hosts at all), so no existing port moves. Their oob addresses are fixed offsets of the site oob
block inside the .2-.15 kept for services (numbering.SITE_ACCESS_OFFSET), so declaring them renumbers nothing.
"""

from __future__ import annotations

from clusterforge.model import ClusterSpec
from clusterforge.plan.cables import cable_class
from clusterforge.plan.context import Context
from clusterforge.plan.errors import PlanError
from clusterforge.plan.fabric import _pname, _provisioned, _tor_up_port
from clusterforge.plan.fabric_dims import access_cores, agg_groups, site_access_switches, site_hosts_max
from clusterforge.plan.naming import RackMeta, access_core, agg_name, site_access, site_rack
from clusterforge.plan.numbering import CONTROL_OFFSET, SITE_ACCESS_OFFSET
from clusterforge.plan.objects import Device, Endpoint, Link
from clusterforge.plan.plane_models import plane_models
from clusterforge.plan.switches import SwitchBuilder
from clusterforge.plan.wiring import Uplink
from clusterforge.vocab import DeviceKind, LinkTier, Plane

__all__ = ["plan_site_access", "provision_site_access", "site_host_ordinal"]

ACCESS_PLANES = (Plane.MANAGEMENT, Plane.OOB)


def site_host_ordinal(spec: ClusterSpec, device: Device, index: int) -> int:
    """The stable site-host ordinal: storage server s is s, control node i follows every envelope storage server."""
    return index if device.kind == DeviceKind.STORAGE else spec.envelope.storage_servers_max + index


def _switches(spec: ClusterSpec, plane: str) -> int:
    return site_access_switches(spec, plane)


def _uplink(ctx: Context, plane: str, t: int, a: int) -> tuple[Uplink, str]:
    """Site access switch t's uplink to top switch a, and the parent's model."""
    spec = ctx.spec
    models = plane_models(spec, plane)
    tor_model = spec.catalog.switches[models.leaf]
    if access_cores(spec):
        parent, first, model = access_core(plane, a), 2 * agg_groups(spec), models.core
    else:
        parent, first = agg_name(plane, a), spec.envelope.max_sus * spec.envelope.max_racks_per_su
        model = models.spine
    return Uplink(site_access(plane, t), _tor_up_port(tor_model, a), parent, first + t, -1), model


def _check_capacity(ctx: Context) -> None:
    spec = ctx.spec
    problems: list[tuple[tuple[str, ...], str]] = []
    for plane in ACCESS_PLANES:
        count = _switches(spec, plane)
        if not count:
            continue
        up, model = _uplink(ctx, plane, count - 1, 0)
        ports = spec.catalog.switches[model].ports
        if up.parent_port >= ports:
            field = "core_model" if access_cores(spec) else "spine_model"
            taken = up.parent_port - (count - 1)
            problems.append((("networks", plane, field), f"the {site_hosts_max(spec)} site host ports of the envelope"
                             f" (storage servers and control nodes) need {count} site access switch(es) on the {plane}"
                             f" plane, each uplinked to {up.parent}; {model} has {ports} ports and the envelope's"
                             f" {'aggregation switches' if access_cores(spec) else 'ToRs'} take {taken}: declare a"
                             f" larger networks.{plane}.{field}"))
    if sum(_switches(spec, plane) for plane in ACCESS_PLANES) > CONTROL_OFFSET - SITE_ACCESS_OFFSET:
        problems.append((("envelope", "storage_servers_max"), f"{site_hosts_max(spec)} site hosts need more site"
                         f" access switches than the {CONTROL_OFFSET - SITE_ACCESS_OFFSET} oob addresses kept for"
                         " them"))
    if problems:
        raise PlanError(problems)


def provision_site_access(ctx: Context, sw: SwitchBuilder) -> None:
    """The top pair's end of every envelope site access switch's uplinks, cabled or not yet."""
    _check_capacity(ctx)
    spec = ctx.spec
    for plane in ACCESS_PLANES:
        leaf = plane_models(spec, plane).leaf
        tor_model = spec.catalog.switches[leaf]
        for t in range(_switches(spec, plane)):
            for a in range(2):
                up, model = _uplink(ctx, plane, t, a)
                speed = min(tor_model.uplink_speed_gbps or tor_model.speed_gbps,
                            spec.catalog.switches[model].speed_gbps)
                _provisioned(ctx, sw, plane, "", up, leaf, model, DeviceKind.MGMT_SWITCH, None, speed)


def _position(ctx: Context, sw: SwitchBuilder, plane: str, t: int) -> tuple[str, int]:
    """Site access switch t of a plane takes the reserved top U of site host rack t + 1, as a compute rack's ToRs do:
    the storage rack series when the envelope has storage servers, else the control racks."""
    spec = ctx.spec
    fac = spec.site.facility
    category, loc = (("storage", ("storage", "servers")) if spec.envelope.storage_servers_max
                     else ("control", ("control", "nodes")))
    rack = site_rack(category, t + 1)
    sw.rack_meta.setdefault(rack, RackMeta(None, t + 1, "site", loc, category, t + 1))
    return rack, fac.rack_u - fac.reserved_top_u + (1 if plane == Plane.MANAGEMENT else 2)


def plan_site_access(ctx: Context, sw: SwitchBuilder, hosts: list[Device]) -> list[Link]:
    """The site access switches that have a host, their uplinks, and every site host's management and oob cable."""
    spec = ctx.spec
    index = {DeviceKind.STORAGE: 0, DeviceKind.CONTROL: 0}
    ordinals = []
    for device in hosts:
        ordinals.append(site_host_ordinal(spec, device, index[device.kind]))
        index[device.kind] += 1
    oob_block = ctx.pools.site_block(Plane.OOB)
    links: list[Link] = []
    for plane in ACCESS_PLANES:
        decl = spec.networks.plane(plane)
        leaf = plane_models(spec, plane).leaf
        tor_model = spec.catalog.switches[leaf]
        built: set[int] = set()
        for device, h in zip(hosts, ordinals, strict=True):
            iface = next((i for i in device.interfaces if i.plane == plane), None)
            if iface is None:
                continue
            t, port = divmod(h, tor_model.ports)
            name = site_access(plane, t)
            if t not in built:
                built.add(t)
                ordinal = t + (_switches(spec, Plane.MANAGEMENT) if plane == Plane.OOB else 0)
                rack, u = _position(ctx, sw, plane, t)
                sw.add(name, DeviceKind.MGMT_SWITCH, plane, leaf, None, rack, u,
                       oob_block.addr(SITE_ACCESS_OFFSET + ordinal))
                for a in range(2):
                    up, model = _uplink(ctx, plane, t, a)
                    speed = min(tor_model.uplink_speed_gbps or tor_model.speed_gbps,
                                spec.catalog.switches[model].speed_gbps)
                    links.append(Link(Endpoint(name, _pname(ctx, plane, leaf, up.child_port)),
                                      Endpoint(up.parent, _pname(ctx, plane, model, up.parent_port)), plane, speed,
                                      decl.mtu, cable_class(rack, sw.meta[up.parent]["rack"], speed),
                                      tier=LinkTier.TOR_AGG))
            speed = min(iface.speed_gbps or tor_model.speed_gbps, tor_model.speed_gbps)
            links.append(Link(Endpoint(device.name, iface.name),
                              Endpoint(name, _pname(ctx, plane, leaf, port)), plane, speed, decl.mtu,
                              cable_class(device.rack, sw.meta[name]["rack"], speed), tier=LinkTier.NODE_TOR))
    return links
