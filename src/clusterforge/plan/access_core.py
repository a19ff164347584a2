"""Management and oob past one aggregation pair: a core pair per plane joins every pair (three tiers).

Every aggregation switch (built for the whole envelope from day one) sends its last two ports to
the plane's two cores, one each; core port = aggregation switch ordinal. Sized by the envelope,
so adding an SU never changes a core or aggregation config.
"""

from __future__ import annotations

from clusterforge.plan.cables import cable_class
from clusterforge.plan.context import Context
from clusterforge.plan.fabric_dims import ACCESS_CORE_UPLINKS, access_cores, agg_groups
from clusterforge.plan.naming import access_core, agg_name
from clusterforge.plan.objects import Endpoint, Link
from clusterforge.plan.switches import SwitchBuilder, site_ordinal
from clusterforge.vocab import DeviceKind, LinkTier, Plane

__all__ = ["plan_access_cores"]


def plan_access_cores(ctx: Context, sw: SwitchBuilder, plane: str) -> list[Link]:
    spec = ctx.spec
    cores = access_cores(spec)
    if not cores:
        return []
    decl = spec.networks.plane(plane)
    models = ctx.models(plane)
    core_model = models.core
    agg = spec.catalog.switches[models.spine]
    core = spec.catalog.switches[core_model]
    speed = min(agg.speed_gbps, core.speed_gbps)
    for c in range(cores):
        ordinal = c + (cores if plane == Plane.OOB else 0)
        rack, u = sw.site_position("access-core", ordinal, core_model)
        sw.add(access_core(plane, c), DeviceKind.MGMT_SWITCH, plane, core_model, None, rack, u,
               sw.site_oob(site_ordinal(ctx, "access-core", ordinal)))
    port_name = ctx.traits(plane).port_name
    links = []
    for index in range(2 * agg_groups(spec)):
        child = agg_name(plane, index)
        for c in range(cores):
            child_port = port_name(agg.ports - ACCESS_CORE_UPLINKS + c, agg.lanes_per_port)
            parent_port = port_name(index, core.lanes_per_port)
            links.append(Link(Endpoint(child, child_port), Endpoint(access_core(plane, c), parent_port), plane, speed,
                              decl.mtu, cable_class(sw.meta[child]["rack"], sw.meta[access_core(plane, c)]["rack"],
                                                    speed), tier=LinkTier.AGG_CORE))
    return links
