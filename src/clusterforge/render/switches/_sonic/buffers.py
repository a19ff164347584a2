"""Lossless buffers for the RoCE priority, as SONiC's dynamic buffer model expects them.

The tables are those of sonic-buildimage's buffers_defaults_objects.j2 and buffers_config.j2 (at
086b03bd70) rendered with `dynamic_mode` (the HWSKUs' buffers_dynamic.json.j2): pools without a size
but the egress lossless one, which buffermgrd sizes from what headroom leaves; the shared profiles;
the lossless PG with the profile "NULL", whose headroom buffermgrd computes from the port's speed,
lanes, MTU and CABLE_LENGTH with buffer_headroom_mellanox.lua; DEFAULT_LOSSLESS_BUFFER_PARAMETER and
LOSSLESS_TRAFFIC_PATTERN, that script's inputs (docs/pfc-headroom.md). Where we differ from
upstream's AZURE defaults (one lossless priority, not 3 and 4; queue 7 gets the lossy queue profile
too), docs/pfc-headroom.md says why. Tables apply to RoCE planes only.
"""

from __future__ import annotations

from clusterforge.model.sonic_ports import SonicBuffers, SonicPlatform
from clusterforge.plan.headroom import (
    DEFAULT_DYNAMIC_TH,
    LOSSLESS_MTU,
    SMALL_PACKET_PCT,
    headroom,
    reserved_bytes,
    shared_pool_bytes,
)
from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._sonic.schema import (
    BufferPool,
    BufferProfile,
    DefaultLosslessBufferParameter,
    LosslessTrafficPattern,
    ProfileList,
    ProfileRef,
)
from clusterforge.render.switches.facts import PortFacts, SwitchFacts

__all__ = [
    "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PORT_EGRESS_PROFILE_LIST", "DEFAULT_LOSSLESS_BUFFER_PARAMETER", "LOSSLESS_TRAFFIC_PATTERN",
    "port_headroom", "ranges", "DYNAMIC_PROFILE", "BUFFER_PARAMETER_KEY",
]

ING_LOSSLESS, ING_LOSSY, EGR_LOSSLESS, EGR_LOSSY = (
    "ingress_lossless_pool", "ingress_lossy_pool", "egress_lossless_pool", "egress_lossy_pool")
ING_LOSSLESS_PROFILE, ING_LOSSY_PROFILE = "ingress_lossless_profile", "ingress_lossy_profile"
EGR_LOSSLESS_PROFILE, EGR_LOSSY_PROFILE, Q_LOSSY_PROFILE = "egress_lossless_profile", "egress_lossy_profile", \
    "q_lossy_profile"
# buffers_defaults_objects.j2: pool, size, dynamic_th of each shared profile
SHARED_PROFILES = {
    ING_LOSSLESS_PROFILE: (ING_LOSSLESS, "0", "7"),
    ING_LOSSY_PROFILE: (ING_LOSSY, "0", "3"),
    EGR_LOSSLESS_PROFILE: (EGR_LOSSLESS, "0", "7"),
    EGR_LOSSY_PROFILE: (EGR_LOSSY, "9216", "7"),
    Q_LOSSY_PROFILE: (EGR_LOSSY, "0", "3"),
}


DYNAMIC_PROFILE = "NULL"  # BUFFER_PG's profile for "buffermgrd computes the headroom" (sonic-buffer-pg.yang)
BUFFER_PARAMETER_KEY = "AZURE"  # buffers_config.j2's key of both parameter tables


def _lossless_ports(facts: SwitchFacts) -> list[PortFacts]:
    return list(facts.ports) if facts.lossless else []


def _platform(facts: SwitchFacts) -> SonicPlatform:
    if facts.sonic_platform is None:
        raise ValueError(f"{facts.name}: switch model {facts.device.model!r} has no SONiC port map in the catalog")
    return facts.sonic_platform


def _buffers(facts: SwitchFacts) -> SonicBuffers:
    buffers = _platform(facts).buffers
    if buffers is None:
        raise ValueError(f"{facts.name}: switch model {facts.device.model!r} has no SONiC buffer parameters in the"
                         " catalog (`sonic.buffers`); a lossless (RoCE) plane needs them")
    return buffers


def _speed(facts: SwitchFacts, port: PortFacts) -> int:
    return port.speed_gbps or _platform(facts).by_name[port.name].speed_gbps


def _lanes(facts: SwitchFacts, port: PortFacts) -> int:
    return len(_platform(facts).by_name[port.name].lanes.split(","))


def port_headroom(facts: SwitchFacts, port: PortFacts, cable_m: int) -> dict[str, int]:
    """xon/xoff/size buffermgrd computes for one port's lossless PG (plan/headroom.py)."""
    return headroom(_speed(facts, port), cable_m, port.mtu, _lanes(facts, port), _buffers(facts).asic)


def BUFFER_POOL(facts: SwitchFacts, qos: SwitchQos) -> dict[str, BufferPool] | None:  # noqa: N802 - table name
    ports = _lossless_ports(facts)
    if not ports:
        return None
    buffers = _buffers(facts)
    reserved = reserved_bytes([(_speed(facts, p), _lanes(facts, p), p.mtu) for p in ports], qos.pfc_cable_length_m,
                              buffers.asic)
    if shared_pool_bytes(buffers, reserved) <= 0:
        raise ValueError(f"{facts.name}: lossless headroom and port reserves of {len(ports)} ports ({reserved} B)"
                         f" leave no shared buffer of the {buffers.egress_lossless_pool} B; shorten"
                         " networks.qos.pfc_cable_length_m")
    out: dict[str, BufferPool] = {name: {"type": name.split("_", 1)[0], "mode": "dynamic"}
                                  for name in (ING_LOSSLESS, ING_LOSSY, EGR_LOSSLESS, EGR_LOSSY)}
    out[EGR_LOSSLESS]["size"] = str(buffers.egress_lossless_pool)  # the dynamic templates size this one only
    return out


def BUFFER_PROFILE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, BufferProfile] | None:  # noqa: N802
    if not _lossless_ports(facts):
        return None
    return {name: {"pool": pool, "size": size, "dynamic_th": th} for name, (pool, size, th) in SHARED_PROFILES.items()}


def DEFAULT_LOSSLESS_BUFFER_PARAMETER(facts: SwitchFacts,  # noqa: N802
                                      qos: SwitchQos) -> dict[str, DefaultLosslessBufferParameter] | None:
    if not _lossless_ports(facts):
        return None
    return {BUFFER_PARAMETER_KEY: {"default_dynamic_th": str(DEFAULT_DYNAMIC_TH)}}


def LOSSLESS_TRAFFIC_PATTERN(facts: SwitchFacts,  # noqa: N802
                             qos: SwitchQos) -> dict[str, LosslessTrafficPattern] | None:
    if not _lossless_ports(facts):
        return None
    return {BUFFER_PARAMETER_KEY: {"mtu": str(LOSSLESS_MTU), "small_packet_percentage": str(SMALL_PACKET_PCT)}}


def ranges(values: list[int]) -> list[str]:
    """[0, 1, 2, 4, 5, 6, 7] -> ["0-2", "4-7"]: SONiC keys PG and queue ranges this way."""
    out: list[str] = []
    ordered = sorted(values)
    start = 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or ordered[i] != ordered[i - 1] + 1:
            first, last = ordered[start], ordered[i - 1]
            out.append(str(first) if first == last else f"{first}-{last}")
            start = i
    return out


def BUFFER_PG(facts: SwitchFacts, qos: SwitchQos) -> dict[str, ProfileRef] | None:  # noqa: N802
    roce = qos.roce_priority
    out: dict[str, ProfileRef] = {}
    for port in _lossless_ports(facts):
        out[f"{port.name}|0"] = {"profile": ING_LOSSY_PROFILE}  # every other TC shares PG 0 (tc_to_pg_map)
        out[f"{port.name}|{roce}"] = {"profile": DYNAMIC_PROFILE}
    return out or None


def BUFFER_QUEUE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, ProfileRef] | None:  # noqa: N802
    roce = qos.roce_priority
    lossy = ranges([q for q in range(8) if q != roce])
    out: dict[str, ProfileRef] = {}
    for port in _lossless_ports(facts):
        out[f"{port.name}|{roce}"] = {"profile": EGR_LOSSLESS_PROFILE}
        out.update({f"{port.name}|{r}": {"profile": Q_LOSSY_PROFILE} for r in lossy})
    return out or None


def BUFFER_PORT_INGRESS_PROFILE_LIST(facts: SwitchFacts, qos: SwitchQos) -> dict[str, ProfileList] | None:  # noqa: N802
    lst = f"{ING_LOSSLESS_PROFILE},{ING_LOSSY_PROFILE}"
    return {p.name: {"profile_list": lst} for p in _lossless_ports(facts)} or None


def BUFFER_PORT_EGRESS_PROFILE_LIST(facts: SwitchFacts, qos: SwitchQos) -> dict[str, ProfileList] | None:  # noqa: N802
    lst = f"{EGR_LOSSLESS_PROFILE},{EGR_LOSSY_PROFILE}"
    return {p.name: {"profile_list": lst} for p in _lossless_ports(facts)} or None
