"""Grow a declaration to N scalable units: capacity what-ifs, scale tests and benchmarks.

`scaled(spec, sus)` keeps everything the declaration says (models, facility, planes, storage) and
changes only what must change for N SUs to fit: the envelope's max_sus, the SU list (SU k copies
the declared SU (k-1) mod len(declared), with id k) and the address pools, which are re-cut from
10.0.0.0/8 wide enough for a 512-SU envelope. Pure: a new, validated ClusterSpec.

Three tiers of 64-port switches end near 64 SUs: a core must take a link from every SU (data) or
pod (storage), and a fourth tier is not planned. `chassis_cores=True` declares, for the data and
storage planes, a core model with CHASSIS_PORTS ports (a modular chassis: the spine model's line
rate, lanes and SONiC port map, scaled up; figures illustrative), as large clusters do. The
management/oob planes get such a core whenever their aggregation pairs outnumber the ports of
the aggregation model (a core takes a link from every aggregation switch).
"""

from __future__ import annotations

from clusterforge.model.cluster import ClusterSpec

__all__ = ["scaled", "SCALED_POOLS", "CHASSIS_PORTS"]

CHASSIS_PORTS = 576

# disjoint slices of 10.0.0.0/8, each wider than the largest example needs at 512 SUs
SCALED_POOLS = {
    "data": "10.0.0.0/11", "fabric_links": "10.32.0.0/11", "storage": "10.64.0.0/12",
    "management": "10.80.0.0/12", "oob": "10.96.0.0/12", "loopbacks": "10.112.0.0/14",
    "kubernetes_services": "10.116.0.0/16", "kubernetes_pods": "10.128.0.0/9",
}
POD_POOL_BITS = 9  # the prefix length of SCALED_POOLS["kubernetes_pods"]


def _kubernetes_ranges(data: dict, sus: int) -> None:
    """The examples' Kubernetes ranges (10.96.0.0/16 services) overlap the scaled oob pool: give services and
    pods slices of their own, and each node a pod block as long as the envelope's servers need (/24 while
    they fit, longer past that)."""
    if "kubernetes" not in data["schedulers"]:
        return
    servers = sus * data["envelope"]["max_nodes_per_su"]
    prefix = max(data["kubernetes"]["node_pod_prefix"], POD_POOL_BITS + max(servers - 1, 1).bit_length())
    data["kubernetes"].update(pod_cidr=SCALED_POOLS["kubernetes_pods"],
                              service_cidr=SCALED_POOLS["kubernetes_services"], node_pod_prefix=prefix)


def _chassis(spine: dict) -> dict:
    model = {**spine, "vendor": "modular", "ports": CHASSIS_PORTS, "uplinks": 0, "uplink_speed_gbps": None,
             "description": f"modular chassis core, {CHASSIS_PORTS} ports at the spine's rate (illustrative, scaled)",
             "max_draw_w": 12_000, "height_u": 16, "weight_kg": 250, "price": 3_000_000, "source": ""}
    if spine.get("sonic"):
        run = spine["sonic"]["runs"][0]  # the spine's port spacing, continued in runs of 192 ports
        model["sonic"] = {**spine["sonic"], "runs": [
            {**run, "ports": 192, "first_name": run.get("first_name", 0) + k * 192 * run["name_step"],
             "first_lane": run.get("first_lane", 0) + k * 192 * run["lane_step"],
             "first_index": run.get("first_index", 1) + k * 192} for k in range(CHASSIS_PORTS // 192)]}
        buffers = spine["sonic"].get("buffers")
        if buffers:  # a chassis has a buffer per line card: the spine's pools, scaled with the ports
            scale = -(-CHASSIS_PORTS // spine["ports"])
            model["sonic"]["buffers"] = {k: v * scale if isinstance(v, int) else v for k, v in buffers.items()}
    return model


def _access_cores(data: dict, sus: int) -> None:
    """Management/oob past one aggregation pair need a core pair taking a link from every aggregation
    switch and every site access switch; where the aggregation model is too small for that, declare its
    chassis as core_model. (plan.fabric_dims.sus_per_agg and site_access_switches, on the raw data.)"""
    nets, switches, racks = data["networks"], data["catalog"]["switches"], data["envelope"]["max_racks_per_su"]
    planes = ("management", "oob")
    fewest = min(switches[nets[p]["spine_model"]]["ports"] for p in planes)
    storage_max = data["envelope"]["storage_servers_max"]
    hosts = storage_max + 3 if storage_max or data["control"]["nodes"] else 0
    site = max(-(-hosts // switches[nets[p]["leaf_model"]]["ports"]) for p in planes) if hosts else 0
    per = fewest // racks
    if per >= 1 and sus * racks + site > fewest:
        per = max(min((fewest - 2) // racks, max(sus - 1, 1)), 1)
    aggs = 2 * -(-sus // per)
    for name in planes:
        agg = nets[name]["spine_model"]
        if aggs > 2 and not nets[name].get("core_model") and switches[agg]["ports"] < aggs + site:
            core = f"{agg}-chassis-{CHASSIS_PORTS}"
            switches[core] = _chassis(switches[agg])
            nets[name]["core_model"] = core


def scaled(spec: ClusterSpec, sus: int, chassis_cores: bool = False) -> ClusterSpec:
    if sus < 1:
        raise ValueError(f"a cluster has at least one scalable unit, not {sus}")
    declared = sorted(spec.scalable_units, key=lambda unit: unit.id)
    units = [declared[(k - 1) % len(declared)].model_copy(update={"id": k}) for k in range(1, sus + 1)]
    data = spec.model_dump()
    for key in ("slurm", "kubernetes"):  # a scheduler's defaults dumped out would read as declared, never applied
        if key not in spec.model_fields_set and key not in spec.schedulers:
            del data[key]
    data["envelope"]["max_sus"] = sus
    data["scalable_units"] = [u.model_dump() for u in units]
    data["teams"] = []  # team quotas are per declared GPU count; a what-if has none
    if (data.get("kubernetes") or {}).get("kueue"):
        data["kubernetes"]["kueue"] = False  # Kueue queues the teams' jobs: without teams, nothing to queue
    nets = data["networks"]
    for name in ("data", "storage", "management", "oob"):
        nets[name]["supernet"] = SCALED_POOLS[name]
    nets["fabric_links"], nets["loopbacks"] = SCALED_POOLS["fabric_links"], SCALED_POOLS["loopbacks"]
    _access_cores(data, sus)
    _kubernetes_ranges(data, sus)
    if chassis_cores:
        for name in ("data", "storage"):
            spine = nets[name]["spine_model"]
            core = f"{spine}-chassis-{CHASSIS_PORTS}"
            data["catalog"]["switches"][core] = _chassis(data["catalog"]["switches"][spine])
            nets[name]["core_model"] = core
    return ClusterSpec.model_validate(data)
