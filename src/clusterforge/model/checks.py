"""Declaration rules no single field can check: no silent accepts. Each problem names the field that causes it.

* duplicates: team names, storage tier names/mounts/exports, NIC names within a server model (and one
  name per NIC; one RDMA device per port where they are named);
* power: a feed the PDU model cannot take (phases, voltage off by > 10 %, current above its rating);
* transport/NOS: InfiniBand only on the infiniband NOS and vice versa, switch models of the plane's
  transport;
* quotas: team GPU quotas within the cluster's GPUs (Kubernetes ResourceQuotas, Slurm GrpTRES limits);
* racks: reserved U within the rack; a liquid limit only with liquid cooling;
* QoS: ECN thresholds in order, RoCE and CNP on different DSCPs and priorities;
* software: the driver version within its branch, open kernel modules from R515 on, the CUDA major's
  minimum driver branch (NVIDIA's minor-version-compatibility table: 11.x >= 450, 12.x >= 525,
  13.x >= 580; open modules first shipped with R515, NVIDIA's open-gpu-kernel-modules announcement);
* storage layout: GlusterFS needs storage servers, and each tier's bricks (servers x bricks_per_server)
  a multiple of its replicas; replicas/bricks_per_server mean nothing for other kinds;
* schedulers and Slurm: model/slurm_checks.py;
* the remediation policy: model/remediation_checks.py.
* settings never applied, or promising more than their parts give: model/applied_checks.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clusterforge.model.applied_checks import applied_problems
from clusterforge.model.cluster import ClusterSpec, Loc
from clusterforge.model.host_checks import CUDA_MIN_DRIVER_BRANCH, host_problems
from clusterforge.model.kubernetes_checks import kubernetes_problems
from clusterforge.model.remediation_checks import remediation_problems
from clusterforge.model.slurm_checks import slurm_problems

__all__ = ["semantic_problems"]

VOLTAGE_TOLERANCE = 0.10


def semantic_problems(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    return [*_duplicates(spec), *_feed_vs_pdu(spec), *_transport(spec), *_quotas(spec), *_racks(spec),
            *_qos(spec), *_software(spec), *_storage_layout(spec), *host_problems(spec),
            *slurm_problems(spec), *kubernetes_problems(spec), *remediation_problems(spec),
            *applied_problems(spec)]


def _first_seen(items: Iterable[tuple[Loc, Any]], what: str) -> list[tuple[Loc, str]]:
    seen: dict[Any, Loc] = {}
    problems: list[tuple[Loc, str]] = []
    for loc, value in items:
        if value in seen:
            problems.append((loc, f"duplicate {what} {value!r} (also at {'.'.join(map(str, seen[value]))})"))
        seen.setdefault(value, loc)
    return problems


def _duplicates(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    problems = _first_seen(((("teams", i, "name"), t.name) for i, t in enumerate(spec.teams)), "team name")
    tiers = spec.storage.tiers
    for field in ("name", "mount", "export"):
        problems += _first_seen(((("storage", "tiers", i, field), getattr(t, field)) for i, t in enumerate(tiers)),
                                f"storage tier {field}")
    for model_name, model in spec.catalog.servers.items():
        named = [(("catalog", "servers", model_name, "nics", group, "names", i), name)
                 for group in ("data", "storage", "management", "oob")
                 for i, name in enumerate(getattr(model.nics, group).names or [])]
        problems += _first_seen(named, "NIC name")
        for group in ("data", "storage", "management", "oob"):
            nics = getattr(model.nics, group)
            if nics.names is not None and len(nics.names) != nics.count:
                problems.append((("catalog", "servers", model_name, "nics", group, "names"),
                                 f"{len(nics.names)} names for {nics.count} NICs; name every NIC or none"))
            if nics.rdma_devices is not None and len(nics.rdma_devices) != nics.ports:
                problems.append((("catalog", "servers", model_name, "nics", group, "rdma_devices"),
                                 f"{len(nics.rdma_devices)} RDMA devices for {nics.ports} ports; name one per port,"
                                 " in rail order, or none"))
    return problems


def _feed_vs_pdu(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    facility = spec.site.facility
    pdu = spec.catalog.pdus.get(facility.pdu_model)
    if pdu is None:  # unknown model: cluster.cross_problems names it
        return []
    feed, where = facility.feed, ("site", "facility", "feed")
    problems: list[tuple[Loc, str]] = []
    if feed.phases != pdu.phases:
        problems.append(((*where, "phases"), f"a {feed.phases}-phase feed cannot supply PDU model"
                         f" {facility.pdu_model!r}, which is {pdu.phases}-phase"))
    if feed.amperage_a > pdu.rating_a:
        problems.append(((*where, "amperage_a"), f"a {feed.amperage_a:g} A circuit exceeds PDU model"
                         f" {facility.pdu_model!r}, rated {pdu.rating_a:g} A; declare circuits of at most"
                         f" {pdu.rating_a:g} A and more of them per rack side (site.facility.pdus_per_side)"))
    if abs(feed.voltage_v - pdu.voltage_v) > VOLTAGE_TOLERANCE * pdu.voltage_v:
        problems.append(((*where, "voltage_v"), f"{feed.voltage_v:g} V does not match PDU model"
                         f" {facility.pdu_model!r} ({pdu.voltage_v:g} V, ±{VOLTAGE_TOLERANCE:.0%})"))
    return problems


def _transport(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    problems: list[tuple[Loc, str]] = []
    for plane_name in ("data", "storage", "management", "oob"):
        plane = spec.networks.plane(plane_name)
        where = ("networks", plane_name)
        infiniband = plane.transport == "infiniband"
        if infiniband != (plane.nos == "infiniband"):
            problems.append(((*where, "nos"), f"nos {plane.nos!r} cannot carry transport {plane.transport!r};"
                             " InfiniBand needs nos 'infiniband', and nos 'infiniband' carries only InfiniBand"))
        wanted = "infiniband" if infiniband else "ethernet"
        for field in ("leaf_model", "spine_model", "core_model"):
            model = spec.catalog.switches.get(getattr(plane, field) or "")
            if model is not None and model.transport != wanted:
                problems.append(((*where, field), f"switch model {getattr(plane, field)!r} is {model.transport};"
                                 f" the {plane_name} plane needs an {wanted} switch"))
    return problems


def _quotas(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    gpus = 0
    for unit in spec.scalable_units:
        model = spec.catalog.servers.get(unit.server_model)
        if model is None:  # unknown model: cluster.cross_problems names it
            return []
        gpus += unit.nodes * model.gpu.count
    problems: list[tuple[Loc, str]] = []
    total = 0
    for index, team in enumerate(spec.teams):
        total += team.gpus
        if team.gpus > gpus:
            problems.append((("teams", index, "gpus"), f"{team.gpus} GPUs exceed the cluster's {gpus}"))
        elif total > gpus:
            problems.append((("teams", index, "gpus"), f"team quotas reach {total} GPUs here; the cluster has {gpus}"))
    return problems


def _racks(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    facility = spec.site.facility
    problems: list[tuple[Loc, str]] = []
    if facility.reserved_top_u >= facility.rack_u:
        problems.append((("site", "facility", "reserved_top_u"),
                         f"{facility.reserved_top_u} reserved U leave nothing of a {facility.rack_u} U rack"))
    if facility.cooling.liquid_limit_w and not facility.cooling.liquid:
        problems.append((("site", "facility", "cooling", "liquid_limit_w"),
                         "a liquid limit without liquid cooling is never applied; set liquid: true or drop it"))
    return problems


def _qos(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    qos, where = spec.networks.qos, ("networks", "qos")
    problems: list[tuple[Loc, str]] = []
    if qos.ecn_min_bytes > qos.ecn_max_bytes:
        problems.append(((*where, "ecn_max_bytes"), f"ECN max {qos.ecn_max_bytes} is below ECN min"
                         f" {qos.ecn_min_bytes}; marking starts at min and reaches its probability at max"))
    if qos.cnp_dscp == qos.roce_dscp:
        problems.append(((*where, "cnp_dscp"), f"CNP and RoCE share DSCP {qos.cnp_dscp}; congestion notifications"
                         " need their own class"))
    if qos.cnp_priority == qos.roce_priority:
        problems.append(((*where, "cnp_priority"), f"CNP and RoCE share priority {qos.cnp_priority}; congestion"
                         " notifications need their own (lossy, strict) queue"))
    return problems


OPEN_MODULES_FROM = 515


def _software(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    sw, where = spec.software, ("software",)
    branch = int(sw.nvidia_driver_branch)
    problems: list[tuple[Loc, str]] = []
    if sw.nvidia_driver_version.split(".", 1)[0] != sw.nvidia_driver_branch:
        problems.append(((*where, "nvidia_driver_version"), f"{sw.nvidia_driver_version} is not of branch"
                         f" {sw.nvidia_driver_branch} (nvidia_driver_branch)"))
    if sw.nvidia_kernel_module == "open" and branch < OPEN_MODULES_FROM:
        problems.append(((*where, "nvidia_kernel_module"), f"open kernel modules ship from R{OPEN_MODULES_FROM};"
                         f" branch {branch} has only the proprietary ones"))
    needed = CUDA_MIN_DRIVER_BRANCH.get(int(sw.cuda_version.split(".", 1)[0]))
    if needed is not None and branch < needed:
        problems.append(((*where, "cuda_version"), f"CUDA {sw.cuda_version} needs driver branch {needed} or later;"
                         f" nvidia_driver_branch is {branch}"))
    return problems


def _storage_layout(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    st = spec.storage
    problems: list[tuple[Loc, str]] = []
    if st.kind == "glusterfs" and st.tiers and not st.servers:
        problems.append((("storage", "servers"), "storage.kind glusterfs needs storage servers (bricks live on them)"))
    for i, tier in enumerate(st.tiers):
        if st.kind != "glusterfs":
            for field in ("replicas", "bricks_per_server"):
                if getattr(tier, field) != 1:
                    problems.append((("storage", "tiers", i, field), f"{field} applies to storage.kind glusterfs only"))
            continue
        bricks = st.servers * tier.bricks_per_server
        if st.servers and bricks % tier.replicas:
            problems.append((("storage", "tiers", i, "replicas"),
                             f"{bricks} brick(s) ({st.servers} server(s) x bricks_per_server {tier.bricks_per_server}) "
                             f"is not a multiple of replicas {tier.replicas}"))
    return problems
