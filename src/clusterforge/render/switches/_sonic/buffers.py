"""Lossless buffers for the RoCE priority, as the HWSKU's traditional buffer templates build them.

Pools, the shared profiles and the per-port profile lists are those of sonic-buildimage's
buffers_defaults_objects.j2 (at 086b03bd70), with the pool sizes of the template upstream picks for
the switch's DEVICE_METADATA type (ToRRouter: t0, else t1; plan/headroom.py). The lossless PG's
profile is the HWSKU's pg_profile_lookup.ini row for the port's speed and the declared cable length,
or where it has none, buffer_headroom_mellanox.lua's formula for the ASIC (docs/pfc-headroom.md).
Where we differ from upstream's AZURE defaults (one lossless priority, not 3 and 4; queue 7 gets the
lossy queue profile too), docs/pfc-headroom.md says why. Tables apply to RoCE planes only.
"""

from __future__ import annotations

from clusterforge.model.sonic_ports import SonicBuffers, SonicPlatform
from clusterforge.plan.headroom import pg_profile, pools_for
from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._sonic.metadata import sonic_device_type
from clusterforge.render.switches._sonic.schema import BufferPool, BufferProfile, ProfileList, ProfileRef
from clusterforge.render.switches.facts import PortFacts, SwitchFacts

__all__ = [
    "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PORT_EGRESS_PROFILE_LIST", "lossless_profile_name", "port_profile", "ranges",
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


def lossless_profile_name(speed_gbps: int, cable_m: int) -> str:
    return f"pg_lossless_{speed_gbps * 1000}_{cable_m}m_profile"  # buffermgrd's naming: speed in Mb/s, cable


def _lossless_ports(facts: SwitchFacts) -> list[PortFacts]:
    return list(facts.ports) if facts.lossless else []


def _platform(facts: SwitchFacts) -> SonicPlatform:
    if facts.sonic_platform is None:
        raise ValueError(f"{facts.name}: switch model {facts.device.model!r} has no SONiC port map in the catalog")
    return facts.sonic_platform


def _buffers(facts: SwitchFacts) -> SonicBuffers:
    buffers = _platform(facts).buffers
    if buffers is None:
        raise ValueError(f"{facts.name}: switch model {facts.device.model!r} has no SONiC buffer pool sizes in the"
                         " catalog (`sonic.buffers`); a lossless (RoCE) plane needs them")
    return buffers


def _speed(facts: SwitchFacts, port: PortFacts) -> int:
    return port.speed_gbps or _platform(facts).by_name[port.name].speed_gbps


def _lanes(facts: SwitchFacts, port: PortFacts) -> int:
    return len(_platform(facts).by_name[port.name].lanes.split(","))


def port_profile(facts: SwitchFacts, port: PortFacts, cable_m: int) -> tuple[str, dict[str, int]]:
    """(profile name, xon/xoff/size) of one port's lossless PG."""
    speed = _speed(facts, port)
    return lossless_profile_name(speed, cable_m), pg_profile(_buffers(facts), speed, cable_m, port.mtu,
                                                             _lanes(facts, port))


def BUFFER_POOL(facts: SwitchFacts, qos: SwitchQos) -> dict[str, BufferPool] | None:  # noqa: N802 - table name
    ports = _lossless_ports(facts)
    if not ports:
        return None
    pools = pools_for(_buffers(facts), sonic_device_type(facts))
    need = sum(port_profile(facts, p, qos.pfc_cable_length_m)[1]["size"] for p in ports)
    if need > pools.ingress_lossless_pool:
        raise ValueError(f"{facts.name}: lossless headroom {need} B for {len(ports)} ports exceeds the"
                         f" {pools.ingress_lossless_pool} B ingress lossless pool; shorten"
                         " networks.qos.pfc_cable_length_m")
    return {name: {"type": name.split("_", 1)[0], "mode": "dynamic", "size": str(getattr(pools, name))}
            for name in (ING_LOSSLESS, ING_LOSSY, EGR_LOSSLESS, EGR_LOSSY)}


def BUFFER_PROFILE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, BufferProfile] | None:  # noqa: N802
    ports = _lossless_ports(facts)
    if not ports:
        return None
    out: dict[str, BufferProfile] = {name: {"pool": pool, "size": size, "dynamic_th": th}
                           for name, (pool, size, th) in SHARED_PROFILES.items()}
    for port in ports:
        name, sizes = port_profile(facts, port, qos.pfc_cable_length_m)
        # buffermgrd's pg_lossless_* profiles: ingress lossless pool, the lookup row's threshold (0)
        out[name] = {"pool": ING_LOSSLESS, "dynamic_th": "0", "xon": str(sizes["xon"]), "xoff": str(sizes["xoff"]),
                     "size": str(sizes["size"])}
    return out


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
    cable, roce = qos.pfc_cable_length_m, qos.roce_priority
    out: dict[str, ProfileRef] = {}
    for port in _lossless_ports(facts):
        out[f"{port.name}|0"] = {"profile": ING_LOSSY_PROFILE}  # every other TC shares PG 0 (tc_to_pg_map)
        out[f"{port.name}|{roce}"] = {"profile": port_profile(facts, port, cable)[0]}
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
