"""Rack-scale systems (GB200/GB300 NVL72) in the plan: trays at their U positions, the NVLink domain of
each rack as a planned object, and the rack's power shelves checked against its peak draw. An SU of
ordinary servers may declare multi-node NVLink domains too (`nvlink_domain_nodes`): planned the same way.

A rack-scale SU's racks are each one catalog rack system. Its compute trays are the SU's servers (hosts
with addresses, a BMC and roles; `servers.server_device` places them at `tray_ru`); the NVLink switch
trays and power shelves are `RackTray`s: drawn in the elevations, counted in the rack's power and
weight, never addressed. Pure functions of the declaration and stable ids.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from clusterforge.model import ClusterSpec, ScalableUnit
from clusterforge.model.cluster import Loc
from clusterforge.plan.naming import compute_rack

__all__ = ["RackTray", "NvlinkPartition", "NvlinkDomain", "tray_ru", "rack_trays", "nvlink_domains",
           "tray_load", "power_shelf_problems", "declared_domain_name", "nvlink_switch_name", "power_shelf_name"]


@dataclass(frozen=True)
class RackTray:
    """A tray of a rack-scale system that is not a host: an NVLink switch tray or a power shelf."""

    name: str
    rack: str
    kind: str  # nvlink-switch | power-shelf
    model: str
    ru: int
    height_u: int
    power_w: float
    weight_kg: float

    def to_dict(self) -> dict:
        return {"name": self.name, "rack": self.rack, "kind": self.kind, "model": self.model, "ru": self.ru,
                "height_u": self.height_u, "power_w": self.power_w, "weight_kg": self.weight_kg}


@dataclass(frozen=True)
class NvlinkPartition:
    name: str
    members: tuple[str, ...]  # compute trays (hosts)


@dataclass(frozen=True)
class NvlinkDomain:
    """One rack's NVLink domain: every GPU of its compute trays joined by its NVLink switch trays."""

    name: str
    rack: str
    su: int
    system: str  # the catalog rack system, or "declared" (an SU's nvlink_domain_nodes)
    members: tuple[str, ...]  # compute trays, bottom up
    gpus: int
    switch_trays: tuple[str, ...]
    partitions: tuple[NvlinkPartition, ...]

    def to_dict(self) -> dict:
        return {"name": self.name, "rack": self.rack, "su": self.su, "system": self.system,
                "members": list(self.members), "gpus": self.gpus, "switch_trays": list(self.switch_trays),
                "partitions": [{"name": p.name, "members": list(p.members)} for p in self.partitions]}


def nvlink_switch_name(rack: str, index: int) -> str:
    return f"{rack}-nvsw{index:02d}"


def power_shelf_name(rack: str, index: int) -> str:
    return f"{rack}-psh{index:02d}"


def tray_ru(spec: ClusterSpec, unit: ScalableUnit, slot: int) -> int | None:
    """U of compute tray `slot` (1-based, bottom up) in a rack-scale SU's rack; None for other SUs."""
    if unit.rack_system is None:
        return None
    return spec.catalog.rack_systems[unit.rack_system].trays("compute")[slot - 1]


def rack_trays(spec: ClusterSpec, units: Iterable[ScalableUnit]) -> list[RackTray]:
    out: list[RackTray] = []
    for unit in units:
        if unit.rack_system is None:
            continue
        system = spec.catalog.rack_systems[unit.rack_system]
        shelf = spec.catalog.power_shelves[system.power_shelf]
        tray = system.nvlink_switch_tray
        for r in range(1, unit.racks + 1):
            rack = compute_rack(unit.id, r)
            for k, u in enumerate(system.trays("nvlink-switch"), 1):
                out.append(RackTray(nvlink_switch_name(rack, k), rack, "nvlink-switch", f"{unit.rack_system}-nvsw",
                                    u, 1, tray.max_draw_w, tray.weight_kg))
            for k, u in enumerate(system.trays("power-shelf"), 1):
                out.append(RackTray(power_shelf_name(rack, k), rack, "power-shelf", system.power_shelf, u,
                                    shelf.height_u, 0.0, shelf.weight_kg))
    return out


def tray_load(trays: Iterable[RackTray]) -> dict[str, tuple[float, float, int]]:
    """Per rack: (power W, weight kg, U) of its non-host trays, for the rack's budget checks."""
    load: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for tray in trays:
        entry = load[tray.rack]
        entry[0] += tray.power_w
        entry[1] += tray.weight_kg
        entry[2] += tray.height_u
    return {rack: (p, w, int(u)) for rack, (p, w, u) in load.items()}


def declared_domain_name(rack: str, index: int) -> str:
    return f"{rack}-nvd{index:02d}"


def _declared_domains(spec: ClusterSpec, unit: ScalableUnit, hosts_by_rack: dict[str, list[str]]
                      ) -> list[NvlinkDomain]:
    """A declared multi-node NVLink domain (`nvlink_domain_nodes: N`, no rack system): every N servers of a
    rack, bottom up; no switch trays are planned for it (its fabric is not a catalog part)."""
    size = unit.nvlink_domain_nodes
    assert size is not None
    gpus = spec.catalog.servers[unit.server_model].gpu.count
    out: list[NvlinkDomain] = []
    for r in range(1, unit.racks + 1):
        rack = compute_rack(unit.id, r)
        hosts = hosts_by_rack.get(rack, [])
        for k, start in enumerate(range(0, len(hosts), size), 1):
            members = tuple(hosts[start:start + size])
            out.append(NvlinkDomain(declared_domain_name(rack, k), rack, unit.id, "declared", members,
                                    gpus * len(members), (), (NvlinkPartition("default", members),)))
    return out


def nvlink_domains(spec: ClusterSpec, units: Iterable[ScalableUnit], hosts_by_rack: dict[str, list[str]],
                   trays: Iterable[RackTray]) -> list[NvlinkDomain]:
    """One domain per rack-scale rack, named after the rack; one partition of all its trays (the
    default NVLink partition: every GPU of the rack reaches every other). In an SU that declares
    `nvlink_domain_nodes: N` instead: one domain of every N servers of a rack, named RACK-nvdKK."""
    switches: dict[str, list[str]] = defaultdict(list)
    for tray in trays:
        if tray.kind == "nvlink-switch":
            switches[tray.rack].append(tray.name)
    out: list[NvlinkDomain] = []
    for unit in units:
        if unit.rack_system is None:
            if unit.nvlink_domain_nodes is not None:
                out += _declared_domains(spec, unit, hosts_by_rack)
            continue
        system = spec.catalog.rack_systems[unit.rack_system]
        gpus_per_tray = spec.catalog.servers[system.compute_tray].gpu.count
        for r in range(1, unit.racks + 1):
            rack = compute_rack(unit.id, r)
            members = tuple(hosts_by_rack.get(rack, ()))
            out.append(NvlinkDomain(f"{rack}-nvl{system.nvlink_gpus}", rack, unit.id, unit.rack_system, members,
                                    gpus_per_tray * len(members), tuple(switches[rack]),
                                    (NvlinkPartition("default", members),)))
    return out


_SPARE = {"N+N": lambda n: n // 2, "N+1": lambda n: min(1, n), "N": lambda n: 0}


def power_shelf_problems(spec: ClusterSpec, rack_power_w: dict[str, float]) -> list[tuple[Loc, str]]:
    """Each rack-scale rack's shelves, less the spares its redundancy keeps, must carry the vendor's
    peak draw times its transient factor, and the planned draw of its trays."""
    problems: list[tuple[Loc, str]] = []
    for index, unit in enumerate(spec.scalable_units):
        if unit.rack_system is None:
            continue
        system = spec.catalog.rack_systems[unit.rack_system]
        shelf = spec.catalog.power_shelves[system.power_shelf]
        shelves = len(system.trays("power-shelf"))
        usable = (shelves - _SPARE[system.power_redundancy](shelves)) * shelf.rating_w
        peak = system.peak_w * system.transient_factor
        for r in range(1, unit.racks + 1):
            rack = compute_rack(unit.id, r)
            need = max(peak, rack_power_w.get(rack, 0.0))
            if need > usable:
                problems.append((("scalable_units", index, "rack_system"),
                                 f"rack {rack}: {shelves} x {system.power_shelf} ({shelf.rating_w:,.0f} W) with"
                                 f" {system.power_redundancy} redundancy carry {usable:,.0f} W, short of the"
                                 f" {need:,.0f} W peak (x{system.transient_factor:g} transient) by"
                                 f" {need - usable:,.0f} W"))
    return problems
