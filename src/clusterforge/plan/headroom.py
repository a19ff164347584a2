"""PFC headroom of a lossless priority group and the buffer it leaves, as SONiC's dynamic buffer model sizes them.

Rendered SONiC switches run `buffer_model: dynamic` (docs/pfc-headroom.md): each lossless PG's profile
is "NULL" and buffermgrd computes it, and the shared pools get what headroom leaves of the chip.
Both computations are upstream Lua scripts, mirrored here in their order and in IEEE doubles, as Lua
evaluates them, so that the results equal the scripts' to the byte:
- sonic-swss cfgmgr/buffer_headroom_mellanox.lua (at e6b0c5b5): a PG's xon/xoff/size from the port's
  speed, lanes, MTU and cable length, with the ASIC's ASIC_TABLE parameters (sonic-buildimage 086b03bd70
  platform/mellanox/asic_table.j2) and the LOSSLESS_TRAFFIC_PATTERN we render (buffers_config.j2's: mtu
  1024, small_packet_percentage 50), shared headroom pool off, no gearbox;
- sonic-swss cfgmgr/buffer_pool_mellanox.lua: what the switch reserves (lossless headroom, lossy PG and
  management PG reserves, egress mirror headroom, the management pool) before the pools without a size
  share the rest; the MMU size is the HWSKU's egress_lossless_pool size, the script's own fallback.
Pure functions; loading refuses what `lossless_budget_problems` finds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import ceil

from clusterforge.model import ClusterSpec
from clusterforge.model.sonic_ports import SonicBuffers
from clusterforge.nos import NOS_TRAITS, NosTraits, traits_for
from clusterforge.vocab import Plane, Transport

__all__ = ["AsicHeadroom", "ASIC_TABLE", "PAUSE_QUANTA", "LOSSLESS_MTU", "SMALL_PACKET_PCT", "headroom",
           "reserved_bytes", "shared_pool_bytes", "lossless_budget_problems", "CABLE_RANGE_M", "longest_cable",
           "DEFAULT_DYNAMIC_TH"]


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
DEFAULT_DYNAMIC_TH = 0  # DEFAULT_LOSSLESS_BUFFER_PARAMETER AZURE (buffers_config.j2): the lossless PGs' threshold
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


# buffer_pool_mellanox.lua's fixed reserves (Spectrum-1 to -5: no modification-descriptor pool)
MGMT_POOL, EGRESS_MIRROR_HEADROOM = 256 * 1024, 10 * 1024
EGRESS_LOSSY_PROFILE_SIZE = 9216  # buffers_defaults_objects.j2's egress_lossy_profile, in every egress profile list


def reserved_bytes(ports: Sequence[tuple[int, int, int]], cable_m: int, asic: str) -> int:
    """What buffer_pool_mellanox.lua takes from the MMU before sizing the pools, for ports given as (Gb/s,
    lanes, MTU), each admin up with the tables buffers.py renders: one lossless PG (the computed profile), lossy
    PG 0 (ingress_lossy_profile, size 0, plus the implicit lossy reserve of one pipeline latency, one less
    than two on an 8-lane port), the management PG (the same reserve), egress mirror headroom and
    egress_lossy_profile; the other profiles are of size 0. Plus the management pool, once."""
    chip = ASIC_TABLE[asic]
    latency = int(chip.pipeline_latency) * 1024
    latency_8lanes = (2 * int(chip.pipeline_latency) - 1) * 1024
    total = MGMT_POOL
    for speed_gbps, lanes, mtu in ports:
        lossy = latency_8lanes if lanes == 8 else latency
        total += headroom(speed_gbps, cable_m, mtu, lanes, asic)["size"]
        total += lossy + lossy  # lossy PG 0 and the management PG
        total += EGRESS_MIRROR_HEADROOM + EGRESS_LOSSY_PROFILE_SIZE
    return total


def shared_pool_bytes(buffers: SonicBuffers, reserved: int) -> int:
    """Each pool without a configured size (ingress lossless, ingress lossy, egress lossy) gets this: the MMU
    less the reserves, halved because two ingress pools share it (buffer_pool_mellanox.lua)."""
    return ceil((buffers.egress_lossless_pool - reserved) / 2)


def _full_ports(model, mtu: int) -> list[tuple[int, int, int]]:
    return [(p.speed_gbps, len(p.lanes.split(",")), mtu) for p in model.sonic.ports()]


def longest_cable(model, buffers: SonicBuffers, mtu: int) -> int:
    """The longest cable (m, within CABLE_RANGE_M) whose headroom on every port still leaves shared buffer."""
    ports = _full_ports(model, mtu)
    lo, hi = CABLE_RANGE_M[0] - 1, CABLE_RANGE_M[1]
    while lo < hi:  # the formula grows with the cable
        mid = (lo + hi + 1) // 2
        fits = shared_pool_bytes(buffers, reserved_bytes(ports, mid, buffers.asic)) > 0
        lo, hi = (mid, hi) if fits else (lo, mid - 1)
    return lo


_FIELDS = ("leaf_model", "spine_model", "core_model")


def lossless_budget_problems(spec: ClusterSpec,
                             nos_traits: Mapping[str, NosTraits] = NOS_TRAITS) -> list[tuple[tuple, str]]:
    """Declaration-level check, before anything renders: on every RoCE plane whose NOS sizes buffers from the
    platform data (NosTraits.platform_data: SONiC), a fully used switch of each model (every port at its
    HWSKU speed, lossless) must leave shared buffer once buffermgrd has reserved its headroom. Returns
    (field location, message) pairs."""
    out: list[tuple[tuple, str]] = []
    cable = spec.networks.qos.pfc_cable_length_m
    for plane_name in Plane.values():
        plane = spec.networks.plane(plane_name)
        if not traits_for(plane.nos, nos_traits).platform_data or plane.transport != Transport.ROCE:
            continue
        for field in _FIELDS:
            name = getattr(plane, field)
            model = spec.catalog.switches.get(name) if name else None
            if model is None or model.sonic is None:
                continue  # unknown model / no port map: reported by the model's own checks
            buffers = model.sonic.buffers
            if buffers is None:
                out.append((("networks", plane_name, field), f"switch model {name!r} has no SONiC buffer"
                            " parameters in the catalog (`sonic.buffers`); a RoCE plane needs them"))
                continue
            need = reserved_bytes(_full_ports(model, plane.mtu), cable, buffers.asic)
            if shared_pool_bytes(buffers, need) <= 0:
                most = longest_cable(model, buffers, plane.mtu)
                allowed = f"allowed: {CABLE_RANGE_M[0]}-{most} m" if most else "no cable length fits"
                problem = (("networks", "qos", "pfc_cable_length_m"),
                           f"{cable} m of cable needs {need} B of lossless headroom and port reserves on a fully"
                           f" used {name} ({plane_name} plane), leaving no shared buffer of its"
                           f" {buffers.egress_lossless_pool} B ({allowed}; docs/pfc-headroom.md)")
                if problem not in out:
                    out.append(problem)
    return out
