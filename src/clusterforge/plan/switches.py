"""Switch identity, placement and management address; shared by every plane's planner."""

from __future__ import annotations

from dataclasses import dataclass, field

from netaddr import IPNetwork

from clusterforge.plan.context import Context
from clusterforge.plan.fabric_dims import access_cores, agg_groups
from clusterforge.plan.facility import series_position
from clusterforge.plan.naming import RackMeta, asset_id, network_rack, site_rack
from clusterforge.plan.numbering import NODE_OFFSET
from clusterforge.plan.objects import Device, Interface
from clusterforge.vocab import Plane

__all__ = ["SwitchBuilder", "SITE_CATEGORIES"]

# site racks hold one category each, in this order of oob ordinals
SITE_CATEGORIES = ("spine", "core", "storage-spine", "agg", "storage-core", "access-core")  # new ones last


@dataclass
class SwitchBuilder:
    """Collects switches and their interfaces while links are planned, then freezes them."""

    ctx: Context
    interfaces: dict[str, list[Interface]] = field(default_factory=dict)
    meta: dict[str, dict] = field(default_factory=dict)
    rack_meta: dict[str, RackMeta] = field(default_factory=dict)
    _names: dict[str, set[str]] = field(default_factory=dict)

    def _mgmt_interface(self, address: str) -> Interface:
        oob = self.ctx.spec.networks.oob
        gateway = str(IPNetwork(address).network + 1)  # .1 of the oob block the address lives in
        return Interface("eth0", Plane.OOB, address, oob.mtu, oob.vlan, gateway=gateway)

    def add(self, name: str, kind: str, plane: str, model: str, su: int | None, rack: str, ru: int,
            oob_address: str, asn: int | None = None, loopback: str | None = None, rail: int | None = None) -> None:
        self.meta[name] = {"kind": kind, "plane": plane, "model": model, "su": su, "rack": rack, "ru": ru,
                           "asn": asn, "loopback": loopback, "rail": rail}
        ifaces = [self._mgmt_interface(oob_address)]
        if loopback:
            ifaces.append(Interface("Loopback0", plane, loopback, 1500))
        self.interfaces[name] = ifaces
        self._names.pop(name, None)

    def port(self, name: str, iface: Interface) -> None:
        """Add a port interface; a port already provisioned for the envelope keeps its planned entry."""
        names = self._names.get(name)
        if names is None:  # built once per switch: the port-name set is kept in step with its interfaces
            names = self._names[name] = {i.name for i in self.interfaces[name]}
        if iface.name not in names:
            names.add(iface.name)
            self.interfaces[name].append(iface)

    def su_network_position(self, su: int, ordinal: int) -> tuple[str, int]:
        spec = self.ctx.spec
        models = [m for m in (spec.networks.data.leaf_model, spec.networks.storage.leaf_model,
                              spec.networks.data.spine_model) if m]
        height = max(spec.catalog.switches[m].height_u for m in models)
        draw = max(spec.catalog.switches[m].max_draw_w for m in models)
        number, u = series_position(ordinal, height, draw, self.ctx.budget)
        rack = network_rack(su, number)
        self.rack_meta[rack] = RackMeta(su, 100 + number, "network", ("scalable_units", self.ctx.su_index(su)),
                                        number=number)
        return rack, u

    def site_position(self, category: str, ordinal: int, model: str) -> tuple[str, int]:
        switch = self.ctx.spec.catalog.switches[model]
        number, u = series_position(ordinal, switch.height_u, switch.max_draw_w, self.ctx.budget)
        rack = site_rack(category, number)
        self.rack_meta[rack] = RackMeta(None, number, "site", ("networks",), category, number)
        return rack, u

    def su_oob(self, su: int, ordinal: int) -> str:
        return self.ctx.pools.su_block(Plane.OOB, su).addr(self.ctx.pools.su_switch_offset + ordinal)

    def site_oob(self, ordinal: int) -> str:
        return self.ctx.pools.site_block(Plane.OOB).addr(self.ctx.pools.site_switch_offset + ordinal)

    def devices(self) -> list[Device]:
        out = []
        catalog = self.ctx.spec.catalog.switches
        for name, meta in self.meta.items():
            model = catalog[meta["model"]]
            out.append(Device(
                name=name, kind=meta["kind"], model=meta["model"], su=meta["su"], rack=meta["rack"], ru=meta["ru"],
                height_u=model.height_u, power_w=model.max_draw_w, weight_kg=model.weight_kg,
                asset_id=asset_id(self.ctx.site, name), interfaces=tuple(self.interfaces[name]),
                psu_feeds=("A", "B"), plane=meta["plane"], asn=meta["asn"], loopback=meta["loopback"],
                rail=meta["rail"],
            ))
        return out


def site_ordinal(ctx: Context, category: str, index: int) -> int:
    """oob ordinal of a site switch: categories in SITE_CATEGORIES order, sized by the envelope."""
    sizes = {
        "spine": ctx.data.spines if ctx.data.tiers == 2 else 0,
        "core": ctx.data.cores,
        "storage-spine": ctx.storage.spines * (ctx.storage.pods if ctx.storage.tiers == 3 else 1),
        "storage-core": ctx.storage.cores,
        "access-core": 2 * access_cores(ctx.spec),
        "agg": 4 * agg_groups(ctx.spec),
    }
    offset = 0
    for name in SITE_CATEGORIES:
        if name == category:
            return offset + index
        offset += sizes[name]
    raise KeyError(category)


__all__ += ["site_ordinal", "NODE_OFFSET"]
