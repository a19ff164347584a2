"""Settings the plan would never apply, or that promise more than the parts they name can give; each refused
at its field with what is allowed.

* bare metal: BMC management (``baremetal.models.<model>``, ``scalable_units[].management``) for a server
  model with an out-of-band NIC: the BMC's address is the server's oob address, and a model without an oob
  NIC gets none, so its servers would never be managed;
* liquid cooling: a CDU loop (``cooling.liquid_loop``) only with ``cooling.liquid: true`` (whether any rack
  sends heat to it is the plan's to say: plan/liquid.py);
* RDMA devices: each names one port of a server model, once (NCCL_IB_HCA lists one device per rail);
* storage: a tier's per-client throughput within what the GPU servers' storage NICs carry (count x speed,
  1 Gb/s = 125 MB/s); an NFS tier's export an absolute path (exports(5) and mount.nfs take one);
* GPU acceptance floors: each at or under the model's datasheet figure (dense TFLOPS by precision, HBM
  bandwidth): a floor above the peak fails every healthy card.
"""

from __future__ import annotations

from clusterforge.model.cluster import ClusterSpec, Loc

__all__ = ["applied_problems", "MB_PER_S_PER_GBPS"]

MB_PER_S_PER_GBPS = 125  # 10^9 bits/s = 125 x 10^6 bytes/s (fio's MB/s, verify/hosts/_storage.py)
PRECISIONS = ("fp16", "bf16", "fp32", "tf32", "fp8")

Problems = list[tuple[Loc, str]]


def applied_problems(spec: ClusterSpec) -> Problems:
    return [*_bare_metal(spec), *_liquid_loop(spec), *_rdma_devices(spec), *_storage_tiers(spec),
            *_acceptance_floors(spec)]


def _bare_metal(spec: ClusterSpec) -> Problems:
    servers = spec.catalog.servers
    problems: Problems = []
    why = ("the BMC is reached at the server's oob address and this model has no oob NIC (nics.oob.count: 0), so no"
           " BMC is planned and the setting is never applied; allowed: a server model with nics.oob.count >= 1")
    for name in spec.baremetal.models:
        model = servers.get(name)
        if model is not None and not model.nics.oob.count:
            problems.append((("baremetal", "models", name), f"server model {name!r}: {why}"))
    for index, unit in enumerate(spec.scalable_units):
        model = servers.get(unit.server_model)
        if unit.management is not None and model is not None and not model.nics.oob.count:
            problems.append((("scalable_units", index, "management"), f"server model {unit.server_model!r}: {why}"))
    return problems


def _liquid_loop(spec: ClusterSpec) -> Problems:
    cooling = spec.site.facility.cooling
    if cooling.liquid_loop is not None and not cooling.liquid:
        return [(("site", "facility", "cooling", "liquid_loop"), "a liquid loop without liquid cooling (liquid:"
                 " false) is never applied; set liquid: true or drop the loop")]
    return []


def _rdma_devices(spec: ClusterSpec) -> Problems:
    problems: Problems = []
    for model_name, model in spec.catalog.servers.items():
        seen: dict[str, Loc] = {}
        for group in ("data", "storage", "management", "oob"):
            for i, device in enumerate(getattr(model.nics, group).rdma_devices or []):
                loc: Loc = ("catalog", "servers", model_name, "nics", group, "rdma_devices", i)
                if device in seen:
                    problems.append((loc, f"RDMA device {device!r} is named twice (also at"
                                     f" {'.'.join(map(str, seen[device]))}); each port has its own device, once"))
                seen.setdefault(device, loc)
    return problems


def _storage_tiers(spec: ClusterSpec) -> Problems:
    problems: Problems = []
    clients = sorted({unit.server_model for unit in spec.scalable_units if unit.server_model in spec.catalog.servers})
    carried = {name: spec.catalog.servers[name].nics.storage for name in clients}
    for i, tier in enumerate(spec.storage.tiers):
        where: Loc = ("storage", "tiers", i)
        if spec.storage.kind == "nfs" and not tier.export.startswith("/"):
            problems.append(((*where, "export"), f"NFS exports a directory by its absolute path; {tier.export!r} is"
                             f" relative; allowed: an absolute path, e.g. /export/{tier.name}"))
        if tier.throughput_mbps is None or not carried:
            continue
        name, nics = min(carried.items(), key=lambda item: item[1].count * item[1].speed_gbps)
        ceiling = nics.count * nics.speed_gbps * MB_PER_S_PER_GBPS
        if tier.throughput_mbps > ceiling:
            problems.append(((*where, "throughput_mbps"), f"{tier.throughput_mbps:g} MB/s per client is more than"
                             f" {name}'s storage NICs carry ({nics.count} x {nics.speed_gbps} Gb/s ="
                             f" {ceiling:,} MB/s); allowed: throughput_mbps <= {ceiling}"))
    return problems


def _acceptance_floors(spec: ClusterSpec) -> Problems:
    problems: Problems = []
    for model_name, model in spec.catalog.servers.items():
        gpu, floors = model.gpu, model.gpu.acceptance
        if floors is None:
            continue
        where: Loc = ("catalog", "servers", model_name, "gpu", "acceptance")
        for kind in ("burst_tflops", "sustained_tflops"):
            for precision in PRECISIONS:
                floor = getattr(getattr(floors, kind), precision)
                peak = getattr(gpu.tflops_dense, precision)
                if floor is None:
                    continue
                if peak is None:
                    problems.append(((*where, kind, precision), f"a {precision} floor for a GPU whose datasheet"
                                     f" figure is not declared; declare gpu.tflops_dense.{precision} or drop it"))
                elif floor > peak:
                    problems.append(((*where, kind, precision), f"{floor:g} TFLOPS is above the dense {precision}"
                                     f" peak {peak:g} (gpu.tflops_dense); no card passes; allowed: <= {peak:g}"))
        bandwidth, floor_tbps = gpu.memory_bandwidth_tbps, floors.memory_bandwidth_tbps
        if floor_tbps is not None and bandwidth is not None and floor_tbps > bandwidth:
            problems.append(((*where, "memory_bandwidth_tbps"), f"{floor_tbps:g} TB/s is above the"
                             f" datasheet HBM bandwidth {bandwidth:g} TB/s (gpu.memory_bandwidth_tbps); no card"
                             f" passes; allowed: <= {bandwidth:g}"))
    return problems
