"""Control/head nodes: racked in a site rack series of their own, on the management and oob planes.

They run the Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler).
Addresses are fixed offsets of the site blocks (numbering.CONTROL_OFFSET), so declaring control nodes
moves no existing address.
"""

from __future__ import annotations

from clusterforge.plan.context import Context
from clusterforge.plan.facility import psu_feeds, series_position
from clusterforge.plan.naming import RackMeta, asset_id, control_node, site_rack
from clusterforge.plan.numbering import CONTROL_OFFSET
from clusterforge.plan.objects import Device, Interface
from clusterforge.plan.switches import SwitchBuilder
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["plan_control_nodes"]


def plan_control_nodes(ctx: Context, sw: SwitchBuilder) -> list[Device]:
    spec = ctx.spec
    control = spec.control
    if not control.nodes or control.server_model is None:
        return []
    model = spec.catalog.servers[control.server_model]
    mgmt = ctx.pools.site_block(Plane.MANAGEMENT)
    oob = ctx.pools.site_block(Plane.OOB)
    devices = []
    for index in range(control.nodes):
        name = control_node(index)
        number, u = series_position(index, model.height_u, model.max_draw_w, ctx.budget)
        rack = site_rack("control", number)
        sw.rack_meta[rack] = RackMeta(None, number, "site", ("control", "nodes"), "control", number)
        ifaces = (
            Interface("mgmt0", Plane.MANAGEMENT, mgmt.addr(CONTROL_OFFSET + index), spec.networks.management.mtu,
                      spec.networks.management.vlan, gateway=mgmt.gateway()),
            Interface("bmc", Plane.OOB, oob.addr(CONTROL_OFFSET + index), spec.networks.oob.mtu,
                      spec.networks.oob.vlan, gateway=oob.gateway()),
        )
        devices.append(Device(name, DeviceKind.CONTROL, control.server_model, None, rack, u, model.height_u,
                              model.max_draw_w, model.weight_kg, asset_id(ctx.site, name), ifaces,
                              psu_feeds(model.psu.count)))
    return devices
