"""Lossless buffers for the RoCE priority: pools, profiles, priority groups and queues.

Headroom of the lossless PG is sized per port from its speed and the declared cable length
(networks.qos.pfc_cable_length_m); docs/pfc-headroom.md shows the arithmetic with worked figures.
Pool sizes are the HWSKU's (catalog `sonic.buffers`). Everything else (other PGs, other queues)
stays lossy. Tables apply to RoCE planes only.
"""

from __future__ import annotations

from typing import Any

from clusterforge.plan.headroom import FRAME_OVERHEAD_B, PROPAGATION_NS_PER_M, RESPONSE_NS, headroom
from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches.facts import SwitchFacts

__all__ = [
    "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "headroom",
    "lossless_profile_name",
    "PROPAGATION_NS_PER_M", "RESPONSE_NS", "FRAME_OVERHEAD_B",
]

ING_LOSSLESS, EGR_LOSSLESS, EGR_LOSSY = "ingress_lossless_pool", "egress_lossless_pool", "egress_lossy_pool"
ING_LOSSY_PROFILE, EGR_LOSSLESS_PROFILE, EGR_LOSSY_PROFILE = (
    "ingress_lossy_profile", "egress_lossless_profile", "egress_lossy_profile")
DYNAMIC_TH_LOSSLESS, DYNAMIC_TH_LOSSY = "7", "3"  # shared-buffer alpha exponent (YANG range -8..7)


def lossless_profile_name(speed_gbps: int, cable_m: int) -> str:
    return f"pg_lossless_{speed_gbps * 1000}_{cable_m}m_profile"  # SONiC's naming: speed in Mb/s, cable


def _lossless_ports(facts: SwitchFacts) -> list:
    return list(facts.ports) if facts.lossless else []


def _pools(facts: SwitchFacts):
    platform = facts.sonic_platform
    if platform is None or platform.buffers is None:
        raise ValueError(f"{facts.name}: switch model {facts.device.model!r} has no SONiC buffer pool sizes in the"
                         " catalog (`sonic.buffers`); a lossless (RoCE) plane needs them")
    return platform.buffers


def _speed(facts: SwitchFacts, port) -> int:
    return port.speed_gbps or facts.sonic_platform.by_name[port.name].speed_gbps


def BUFFER_POOL(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802 - table name
    ports = _lossless_ports(facts)
    if not ports:
        return None
    pools = _pools(facts)
    need = sum(headroom(_speed(facts, p), qos.pfc_cable_length_m, p.mtu)["size"] for p in ports)
    if need > pools.ingress_lossless_pool:
        raise ValueError(f"{facts.name}: lossless headroom {need} B for {len(ports)} ports exceeds the"
                         f" {pools.ingress_lossless_pool} B ingress lossless pool; shorten"
                         " networks.qos.pfc_cable_length_m")
    return {
        ING_LOSSLESS: {"type": "ingress", "mode": "dynamic", "size": str(pools.ingress_lossless_pool)},
        EGR_LOSSLESS: {"type": "egress", "mode": "dynamic", "size": str(pools.egress_lossless_pool)},
        EGR_LOSSY: {"type": "egress", "mode": "dynamic", "size": str(pools.egress_lossy_pool)},
    }


def BUFFER_PROFILE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    ports = _lossless_ports(facts)
    if not ports:
        return None
    cable = qos.pfc_cable_length_m
    out: dict[str, Any] = {
        ING_LOSSY_PROFILE: {"pool": ING_LOSSLESS, "size": "0", "dynamic_th": DYNAMIC_TH_LOSSY},
        EGR_LOSSLESS_PROFILE: {"pool": EGR_LOSSLESS, "size": "0", "dynamic_th": DYNAMIC_TH_LOSSLESS},
        EGR_LOSSY_PROFILE: {"pool": EGR_LOSSY, "size": "0", "dynamic_th": DYNAMIC_TH_LOSSY},
    }
    for port in ports:
        speed = _speed(facts, port)
        sizes = headroom(speed, cable, port.mtu)
        out[lossless_profile_name(speed, cable)] = {
            "pool": ING_LOSSLESS, "dynamic_th": "0", **{k: str(v) for k, v in sizes.items()}}
    return out


def _ranges(values: list[int]) -> list[str]:
    """[0, 1, 2, 4, 5, 6, 7] -> ["0-2", "4-7"]: SONiC keys PG and queue ranges this way."""
    out: list[str] = []
    start = prev = None
    for v in sorted(values) + [None]:
        if start is not None and (v is None or v != prev + 1):
            out.append(str(start) if start == prev else f"{start}-{prev}")
            start = None
        if v is not None and start is None:
            start = v
        prev = v
    return out


def BUFFER_PG(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    cable, roce = qos.pfc_cable_length_m, qos.roce_priority
    out: dict[str, Any] = {}
    for port in _lossless_ports(facts):
        out[f"{port.name}|0"] = {"profile": ING_LOSSY_PROFILE}  # every other TC shares PG 0 (tc_to_pg_map)
        out[f"{port.name}|{roce}"] = {"profile": lossless_profile_name(_speed(facts, port), cable)}
    return out or None


def BUFFER_QUEUE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    roce = qos.roce_priority
    lossy = _ranges([q for q in range(8) if q != roce])
    out: dict[str, Any] = {}
    for port in _lossless_ports(facts):
        out[f"{port.name}|{roce}"] = {"profile": EGR_LOSSLESS_PROFILE}
        out.update({f"{port.name}|{r}": {"profile": EGR_LOSSY_PROFILE} for r in lossy})
    return out or None
