"""PFC headroom of a lossless priority group, sized the way SONiC sizes it on the switch's ASIC.

Two upstream sources, used as SONiC itself uses them (docs/pfc-headroom.md has the arithmetic):
- the HWSKU's pg_profile_lookup.ini (catalog `sonic.buffers.pg_profile_lookup`): in the traditional
  buffer model buffermgrd takes the row for the port's speed and cable length; where it has one, so do we;
- otherwise sonic-swss cfgmgr/buffer_headroom_mellanox.lua (at e6b0c5b5), the formula buffermgrd runs
  in the dynamic model, with the ASIC's ASIC_TABLE parameters (sonic-buildimage 086b03bd70
  platform/mellanox/asic_table.j2) and the default LOSSLESS_TRAFFIC_PATTERN (files/build_templates/
  buffers_config.j2: mtu 1024, small_packet_percentage 50), shared headroom pool off.
The arithmetic is in the Lua script's order and in IEEE doubles, as Lua computes it, so that the
result equals the script's to the byte. Pure functions; loading refuses what `lossless_budget_problems` finds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import ceil

from clusterforge.model import ClusterSpec
from clusterforge.model.sonic_ports import PgProfileRow, SonicBuffers, SonicPools
from clusterforge.nos import NOS_TRAITS, NosTraits, traits_for
from clusterforge.vocab import Plane, Transport

__all__ = ["AsicHeadroom", "ASIC_TABLE", "PAUSE_QUANTA", "LOSSLESS_MTU", "SMALL_PACKET_PCT", "headroom",
           "pg_profile", "lookup_row", "pools_for", "lossless_budget_problems", "CABLE_RANGE_M", "template_of",
           "longest_cable"]


@dataclass(frozen=True, slots=True)
class AsicHeadroom:
    cell_size: int            # bytes
    pipeline_latency: float   # KB (x 1024)
    mac_phy_delay: float      # KB
    peer_response_time: float  # KB, used only for a speed without a pause-quanta entry
    kb_on_tile: bool          # Spectrum-4/5: speed / 1000 * 120 / 8 bytes more in flight


# platform/mellanox/asic_table.j2 at sonic-buildimage 086b03bd70 (Spectrum-6 adds a compensation we do not model)
ASIC_TABLE: dict[str, AsicHeadroom] = {
    "MELLANOX-SPECTRUM": AsicHeadroom(96, 19, 0.8, 3.8, False),
    "MELLANOX-SPECTRUM-2": AsicHeadroom(144, 19, 0.8, 3.8, False),
    "MELLANOX-SPECTRUM-3": AsicHeadroom(144, 19, 0.8, 3.8, False),
    "MELLANOX-SPECTRUM-4": AsicHeadroom(192, 19, 0.8, 3.8, True),
    "MELLANOX-SPECTRUM-5": AsicHeadroom(192, 19, 0.8, 3.8, True),
}
# IEEE 802.3 31B.3.7 pause quanta per operating speed (Mb/s), as buffer_headroom_mellanox.lua lists them
PAUSE_QUANTA = {800000: 905, 400000: 905, 200000: 453, 100000: 394, 50000: 147, 40000: 118, 25000: 80,
                10000: 67, 1000: 2, 100: 1}
LOSSLESS_MTU, SMALL_PACKET_PCT = 1024, 50  # LOSSLESS_TRAFFIC_PATTERN AZURE (buffers_config.j2)
SPEED_OF_LIGHT, MIN_PACKET, COMPENSATION = 198000000, 64, 2 * 1024  # the script's constants
CABLE_RANGE_M = (1, 10_000)  # CABLE_LENGTH values the model accepts; YANG's pattern is [0-9]+m


def _kb_round(value: float) -> int:
    return ceil(value / 1024) * 1024


def headroom(speed_gbps: int, cable_m: int, mtu: int, lanes: int, asic: str) -> dict[str, int]:
    """xon/xoff/size in bytes for one lossless PG, from buffer_headroom_mellanox.lua (SHP disabled)."""
    chip = ASIC_TABLE[asic]
    speed = speed_gbps * 1000  # the script takes Mb/s
    pipeline = chip.pipeline_latency * 1024
    speed_overhead = 0
    if lanes == 8:  # the script's 8-lane adjustment
        pipeline = pipeline * 2
        speed_overhead = mtu
    cell = chip.cell_size
    worst = cell / MIN_PACKET if cell > 2 * MIN_PACKET else (2 * cell) / (1 + cell)
    worst = ceil(worst)
    by_byte = 100 * MIN_PACKET / ((SMALL_PACKET_PCT * MIN_PACKET + (100 - SMALL_PACKET_PCT) * LOSSLESS_MTU) / 100)
    occupancy = (100 - by_byte + by_byte * worst) / 100
    quanta = PAUSE_QUANTA.get(speed)
    peer = quanta * 512 / 8 if quanta is not None else chip.peer_response_time * 1024
    on_tile = speed / 1000 * 120 / 8 if chip.kb_on_tile else 0
    on_cable = 2 * cable_m * speed * 1000000000 / SPEED_OF_LIGHT / (8 * 1000)
    propagation = mtu + on_cable + 0 + chip.mac_phy_delay * 1024 + peer + on_tile  # no gearbox
    xoff = _kb_round(LOSSLESS_MTU + propagation * occupancy)
    if SMALL_PACKET_PCT != 100:  # the script's compensation for a reduced small-packet share
        full = _kb_round(LOSSLESS_MTU + propagation * worst)
        if xoff + COMPENSATION < full:
            xoff += COMPENSATION
    xon = _kb_round(pipeline)
    size = _kb_round(xoff + xon + speed_overhead)
    return {"xon": xon, "xoff": xoff, "size": size}


def lookup_row(buffers: SonicBuffers, speed_gbps: int, cable_m: int) -> PgProfileRow | None:
    return next((r for r in buffers.pg_profile_lookup if r.speed_mbps == speed_gbps * 1000 and r.cable_m == cable_m),
                None)


def pg_profile(buffers: SonicBuffers, speed_gbps: int, cable_m: int, mtu: int, lanes: int) -> dict[str, int]:
    """The lossless PG profile SONiC would use: the HWSKU's lookup row where it has one, else the formula."""
    row = lookup_row(buffers, speed_gbps, cable_m)
    if row is not None:
        return {"xon": row.xon, "xoff": row.xoff, "size": row.size}
    return headroom(speed_gbps, cable_m, mtu, lanes, buffers.asic)


def template_of(device_type: str) -> str:
    """buffers_config.j2's choice of template by DEVICE_METADATA type: ToRRouter -> t0, else t1 (these
    HWSKUs ship no t2 template, so a SpineRouter core takes t1, the nearest they have)."""
    return "t0" if "torrouter" in device_type.lower() and "mgmt" not in device_type.lower() else "t1"


def pools_for(buffers: SonicBuffers, device_type: str) -> SonicPools:
    return buffers.t0 if template_of(device_type) == "t0" else buffers.t1


def _need(model, buffers: SonicBuffers, cable_m: int, mtu: int) -> int:
    return sum(pg_profile(buffers, p.speed_gbps, cable_m, mtu, len(p.lanes.split(",")))["size"]
               for p in model.sonic.ports())


def longest_cable(model, buffers: SonicBuffers, pool: int, mtu: int) -> int:
    """The longest cable (m, within CABLE_RANGE_M) whose headroom on every port still fits the pool."""
    lo, hi = CABLE_RANGE_M[0] - 1, CABLE_RANGE_M[1]
    while lo < hi:  # the formula grows with the cable; lookup rows are only ever larger than it nearby
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if _need(model, buffers, mid, mtu) <= pool else (lo, mid - 1)
    return lo


_FIELD_TYPES = {"leaf_model": "ToRRouter", "spine_model": "LeafRouter", "core_model": "SpineRouter"}


def lossless_budget_problems(spec: ClusterSpec,
                             nos_traits: Mapping[str, NosTraits] = NOS_TRAITS) -> list[tuple[tuple, str]]:
    """Declaration-level check, before anything renders: on every RoCE plane whose NOS sizes buffers from the
    platform data (NosTraits.platform_data: SONiC), each switch
    model's ingress lossless pool (of its role's template) must hold the headroom of all its ports at
    their full speed. Returns (field location, message) pairs."""
    out: list[tuple[tuple, str]] = []
    cable = spec.networks.qos.pfc_cable_length_m
    for plane_name in Plane.values():
        plane = spec.networks.plane(plane_name)
        if not traits_for(plane.nos, nos_traits).platform_data or plane.transport != Transport.ROCE:
            continue
        for field, device_type in _FIELD_TYPES.items():
            name = getattr(plane, field)
            model = spec.catalog.switches.get(name) if name else None
            if model is None or model.sonic is None:
                continue  # unknown model / no port map: reported by the model's own checks
            buffers = model.sonic.buffers
            if buffers is None:
                out.append((("networks", plane_name, field), f"switch model {name!r} has no SONiC buffer pool"
                            " sizes in the catalog (`sonic.buffers`); a RoCE plane needs them"))
                continue
            need = _need(model, buffers, cable, plane.mtu)
            pool = pools_for(buffers, device_type).ingress_lossless_pool
            if need > pool:
                most = longest_cable(model, buffers, pool, plane.mtu)
                allowed = f"allowed: {CABLE_RANGE_M[0]}-{most} m" if most else "no cable length fits"
                problem = (("networks", "qos", "pfc_cable_length_m"),
                           f"{cable} m of cable needs {need} B of lossless headroom on a fully used {name}"
                           f" ({plane_name} plane, {template_of(device_type)} pools), more than its {pool} B"
                           f" ingress lossless pool ({allowed}; docs/pfc-headroom.md)")
                if problem not in out:
                    out.append(problem)
    return out
