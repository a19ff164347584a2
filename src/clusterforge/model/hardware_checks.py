"""Declaration rules for today's hardware: catalog references between parts, NIC planes against the
data plane's transport, rack-scale systems placed only as whole racks, and declared NVLink domains
(`nvlink_domain_nodes`) whole within their racks.

Each problem names where it lives and what is allowed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clusterforge.model.cluster import ClusterSpec, Loc
    from clusterforge.model.units import ScalableUnit

__all__ = ["hardware_problems", "rack_counts"]

Problems = list[tuple["Loc", str]]


def _names(known: dict) -> str:
    return ", ".join(sorted(known)) or "(none in the catalog)"


def _catalog_refs(spec: ClusterSpec) -> Problems:
    cat = spec.catalog
    problems: Problems = []
    used = {unit.server_model for unit in spec.scalable_units} | {spec.storage.server_model}
    for name, server in sorted((n, m) for n, m in cat.servers.items() if n in used):
        for group in ("data", "storage", "management", "oob"):
            nic = getattr(server.nics, group).model
            if nic is not None and nic not in cat.nics:
                problems.append((("catalog", "servers", name, "nics", group, "model"),
                                 f"unknown NIC model {nic!r}; the catalog has: {_names(cat.nics)}"))
    systems = {unit.rack_system for unit in spec.scalable_units}
    for name, system in sorted((n, m) for n, m in cat.rack_systems.items() if n in systems):
        where = ("catalog", "rack_systems", name)
        if system.compute_tray not in cat.servers:
            problems.append(((*where, "compute_tray"),
                             f"unknown server model {system.compute_tray!r}; the catalog has: {_names(cat.servers)}"))
        tray = cat.servers.get(system.compute_tray)
        gpus = len(system.trays("compute")) * tray.gpu.count if tray is not None else system.nvlink_gpus
        if system.nvlink_gpus != gpus:  # the rack is one NVLink domain: every GPU of its compute trays
            problems.append(((*where, "nvlink_gpus"), f"{len(system.trays('compute'))} compute trays of"
                             f" {tray.gpu.count if tray else '?'} GPUs are {gpus} GPUs in the rack's NVLink"
                             f" domain, not {system.nvlink_gpus}; allowed: nvlink_gpus: {gpus}"))
        if system.power_shelf not in cat.power_shelves:
            problems.append(((*where, "power_shelf"), f"unknown power shelf {system.power_shelf!r}; the catalog"
                             f" has: {_names(cat.power_shelves)}"))
    return problems


def _nic_planes(spec: ClusterSpec) -> Problems:
    """A NIC that runs two Ethernet links (ConnectX-8: 2 x 400GbE) is two planes on an Ethernet data
    plane and one 800G port on InfiniBand; the server model must say which it is."""
    cat = spec.catalog
    transport = spec.networks.data.transport
    ethernet = transport in ("ethernet", "roce")
    problems: Problems = []
    for model in sorted({unit.server_model for unit in spec.scalable_units}):
        server = cat.servers.get(model)
        if server is None or server.nics.data.model not in cat.nics or not server.nics.data.count:
            continue
        group, nic = server.nics.data, cat.nics[server.nics.data.model]
        where = ("catalog", "servers", model, "nics", "data")
        if ethernet and nic.ethernet_planes == 2 and group.planes != 2:
            problems.append(((*where, "planes"), f"{group.model} runs {nic.ethernet_planes} x {nic.ethernet_gbps}GbE"
                             f" on Ethernet (networks.data.transport: {transport}): each NIC is two planes, a rail"
                             f" and a leaf each; allowed: planes: 2 with speed_gbps <= {nic.ethernet_gbps}"
                             f" ({group.count * 2} rails; envelope.max_rails >= {group.count * 2})"))
        elif not ethernet and group.planes != 1:
            problems.append(((*where, "planes"), f"on InfiniBand {group.model} is one port of up to"
                             f" {nic.infiniband_gbps or nic.ethernet_gbps} Gb/s; allowed: planes: 1"))
        limit = nic.ethernet_gbps if ethernet else nic.infiniband_gbps
        if limit is None:
            problems.append(((*where, "model"), f"{group.model} has no InfiniBand mode; allowed: an Ethernet"
                             " data plane, or a NIC with infiniband_gbps"))
        elif group.speed_gbps > limit:
            what = "per Ethernet link" if ethernet else "on InfiniBand"
            problems.append(((*where, "speed_gbps"), f"{group.model} runs at most {limit} Gb/s {what};"
                             f" allowed: speed_gbps <= {limit}"))
        if group.ports > spec.envelope.max_rails:
            problems.append(((*where, "planes"), f"{group.count} NICs x {group.planes} plane(s) make"
                             f" {group.ports} rails, more than envelope.max_rails={spec.envelope.max_rails}"))
    return problems


def _rack_scale_units(spec: ClusterSpec) -> Problems:
    """A rack-scale system is placed as a whole rack: its compute trays and nothing else, every rack of
    the SU full, so each NVLink domain (the rack) has all its trays and none spans two racks."""
    cat = spec.catalog
    trays = {system.compute_tray: name for name, system in cat.rack_systems.items()}
    problems: Problems = []
    for index, unit in enumerate(spec.scalable_units):
        where = ("scalable_units", index)
        if unit.rack_system is None:
            problems += _declared_nvlink_domains(unit, where)
            if unit.server_model in trays:
                problems.append(((*where, "server_model"), f"{unit.server_model} is the compute tray of the"
                                 f" rack system {trays[unit.server_model]}, which places as a whole rack; allowed:"
                                 f" rack_system: {trays[unit.server_model]} (or a server model that is not a tray)"))
            continue
        if unit.nvlink_domain_nodes is not None:
            problems.append(((*where, "nvlink_domain_nodes"), f"a {unit.rack_system} rack is one NVLink domain"
                             " already (every compute tray of the rack); allowed: no nvlink_domain_nodes with"
                             " rack_system"))
        system = cat.rack_systems.get(unit.rack_system)
        if system is None:
            problems.append(((*where, "rack_system"),
                             f"unknown rack system {unit.rack_system!r}; the catalog has: {_names(cat.rack_systems)}"))
            continue
        per_rack = len(system.trays("compute"))
        if unit.server_model != system.compute_tray:
            problems.append(((*where, "server_model"), f"a {unit.rack_system} rack holds only its own compute"
                             f" trays; allowed: server_model: {system.compute_tray}"))
        if unit.nodes_per_rack is not None and unit.nodes_per_rack != per_rack:
            problems.append(((*where, "nodes_per_rack"), f"a {unit.rack_system} rack is {per_rack} compute trays"
                             f" and nothing else (its NVLink switch trays and power shelves fill the rest);"
                             f" allowed: nodes_per_rack: {per_rack}"))
        elif unit.nodes != unit.racks * per_rack:
            problems.append(((*where, "nodes"), f"{unit.nodes} trays in {unit.racks} racks split an NVLink domain"
                             f" across racks or leave one partial: a {unit.rack_system} rack is one NVLink domain of"
                             f" {per_rack} trays; allowed: nodes: {unit.racks * per_rack} (racks x {per_rack})"))
        if spec.site.facility.rack_u < system.rack_u:
            problems.append((("site", "facility", "rack_u"), f"{unit.rack_system} is a {system.rack_u}U rack;"
                             f" allowed: rack_u >= {system.rack_u}"))
    return problems


def rack_counts(unit: ScalableUnit) -> list[int]:
    """The servers in each of the SU's racks: rack_stride in each, the rest in the last ones."""
    stride, left, counts = unit.rack_stride, unit.nodes, []
    for _ in range(unit.racks):
        counts.append(min(stride, max(left, 0)))
        left -= stride
    return counts


def _declared_nvlink_domains(unit: ScalableUnit, where: tuple) -> Problems:
    """Declared NVLink domains of N servers each never span two racks and none is partial: every rack's
    servers are a whole number of domains."""
    size = unit.nvlink_domain_nodes
    if size is None:
        return []
    counts = rack_counts(unit)
    partial = [(r, n) for r, n in enumerate(counts, 1) if n % size]
    if not partial:
        return []
    r, n = partial[0]
    return [((*where, "nvlink_domain_nodes"), f"rack {r} of SU {unit.id} holds {n} server(s), not a whole number"
             f" of {size}-server NVLink domains (a domain never spans two racks); allowed: a size that divides"
             f" every rack's servers ({', '.join(str(c) for c in counts)})")]


def hardware_problems(spec: ClusterSpec) -> Problems:
    return [*_catalog_refs(spec), *_nic_planes(spec), *_rack_scale_units(spec)]
