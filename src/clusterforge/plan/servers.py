"""GPU servers: identity, placement and host-side interfaces on every plane."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from clusterforge.model import ScalableUnit
from clusterforge.plan.context import Context
from clusterforge.plan.facility import psu_feeds
from clusterforge.plan.naming import asset_id, compute_rack, server_name
from clusterforge.plan.objects import Device, Interface
from clusterforge.plan.rackscale import tray_ru
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["NodeSlot", "node_slots", "server_device", "nic_name"]


@dataclass(frozen=True)
class NodeSlot:
    su: int
    rack: int  # 1-based rack index inside the SU
    slot: int  # 1-based position inside the rack
    node: int  # 1-based node index inside the SU: (rack - 1) x stride + slot

    @property
    def name(self) -> str:
        return server_name(self.su, self.rack, self.slot)

    @property
    def rack_name(self) -> str:
        return compute_rack(self.su, self.rack)


def node_slots(unit: ScalableUnit) -> Iterator[NodeSlot]:
    stride = unit.rack_stride
    for node in range(1, unit.nodes + 1):
        rack, slot = divmod(node - 1, stride)
        yield NodeSlot(unit.id, rack + 1, slot + 1, node)


def nic_name(model_names: list[str] | None, prefix: str, index: int) -> str:
    if model_names and index < len(model_names):
        return model_names[index]
    return f"{prefix}{index}"


def server_device(ctx: Context, unit: ScalableUnit, slot: NodeSlot) -> Device:
    spec = ctx.spec
    model = spec.catalog.servers[unit.server_model]
    nets = spec.networks
    pools = ctx.pools
    mgmt_block = pools.su_block(Plane.MANAGEMENT, slot.su)
    stor_block = pools.su_block(Plane.STORAGE, slot.su)
    interfaces: list[Interface] = []
    if model.nics.management.count:
        interfaces.append(Interface(
            nic_name(model.nics.management.names, "mgmt", 0), Plane.MANAGEMENT,
            pools.node(Plane.MANAGEMENT, slot.su, slot.node), nets.management.mtu, nets.management.vlan,
            gateway=mgmt_block.gateway(), speed_gbps=model.nics.management.speed_gbps))
    if model.nics.storage.count:
        interfaces.append(Interface(
            "bond0", Plane.STORAGE, pools.node(Plane.STORAGE, slot.su, slot.node), nets.storage.mtu, nets.storage.vlan,
            gateway=stor_block.gateway(),
            members=tuple(nic_name(model.nics.storage.names, "stor", i) for i in range(model.nics.storage.count)),
            speed_gbps=model.nics.storage.speed_gbps))
    for rail in range(model.nics.data.ports):
        host_ip, leaf_ip = pools.data_nic(slot.su, slot.node, rail)
        interfaces.append(Interface(nic_name(model.nics.data.names, "rail", rail), Plane.DATA, host_ip, nets.data.mtu,
                                    None, peer_ip=leaf_ip.split("/")[0] if leaf_ip else None, rail=rail,
                                    speed_gbps=model.nics.data.speed_gbps))
    if model.nics.oob.count:
        interfaces.append(Interface("bmc", Plane.OOB, pools.node(Plane.OOB, slot.su, slot.node), nets.oob.mtu,
                                    nets.oob.vlan, gateway=pools.su_block(Plane.OOB, slot.su).gateway(),
                                    speed_gbps=model.nics.oob.speed_gbps))
    return Device(
        name=slot.name, kind=DeviceKind.SERVER, model=unit.server_model, su=slot.su, rack=slot.rack_name,
        ru=tray_ru(spec, unit, slot.slot) or 1 + (slot.slot - 1) * model.height_u, height_u=model.height_u,
        power_w=model.max_draw_w,
        weight_kg=model.weight_kg, asset_id=asset_id(ctx.site, slot.name), interfaces=tuple(interfaces),
        psu_feeds=psu_feeds(model.psu.count), gpus=model.gpu.count,
    )
