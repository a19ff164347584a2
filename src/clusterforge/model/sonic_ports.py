"""A SONiC platform's front-panel port map, as the catalog records it per switch model.

SONiC identifies a port by its name (Ethernet<first lane>), its SerDes lanes, alias and index,
all fixed by the platform's port_config.ini / hwsku.json for one HWSKU. The catalog records each
map as runs of evenly spaced ports (most platforms are one run; ToR models with uplinks are two),
with the upstream file it was read from. `ports()` expands the runs into one entry per port.
"""

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Self

from pydantic import Field, model_validator

from clusterforge.model.base import Declared
from clusterforge.model.grammar import FreeText
from clusterforge.model.numbers import Integer

__all__ = ["SonicPortRun", "SonicPlatform", "SonicPort", "SonicBuffers", "SpectrumAsic"]


@dataclass(frozen=True, slots=True)
class SonicPort:
    name: str
    lanes: str  # comma-separated lane numbers, as config_db.json writes them
    alias: str
    index: int
    speed_gbps: int  # the HWSKU's default breakout speed of this port
    speeds_gbps: tuple[int, ...]  # every speed that breakout mode allows


class SonicPortRun(Declared):
    """`ports` consecutive ports: name number, first lane and index each advance by a fixed step."""

    ports: Integer = Field(ge=1, le=256)
    first_name: Integer = Field(default=0, ge=0, description="N of the first EthernetN")
    name_step: Integer = Field(ge=1, le=8)
    first_lane: Integer = Field(default=0, ge=0)
    lanes: Integer = Field(ge=1, le=8, description="lanes per port")
    lane_step: Integer = Field(ge=1, le=8)
    first_index: Integer = Field(default=1, ge=0)
    alias: str | None = Field(default=None, pattern=r"^[a-z]{1,8}$", description="alias prefix + index (etp1)")
    speed_gbps: Integer = Field(gt=0, le=800)
    speeds_gbps: list[Integer] | None = Field(default=None, description="speeds the default breakout mode allows"
                                          " (hwsku.json default_brkout_mode); default: speed_gbps only")


SpectrumAsic = Literal["MELLANOX-SPECTRUM", "MELLANOX-SPECTRUM-2", "MELLANOX-SPECTRUM-3", "MELLANOX-SPECTRUM-4",
                       "MELLANOX-SPECTRUM-5"]  # ASIC_TABLE keys of platform/mellanox/asic_table.j2 (plan/headroom.py)


class SonicBuffers(Declared):
    """What SONiC's dynamic buffer model needs of the HWSKU beyond the port map: its ASIC (whose ASIC_TABLE
    parameters size the headroom, plan/headroom.py) and the egress lossless pool of its buffer templates
    (buffers_defaults_t0/t1.j2, the same in both), the one pool the dynamic templates size; the switch
    shares what headroom leaves of it among the other pools."""

    asic: SpectrumAsic
    egress_lossless_pool: Integer = Field(gt=0, description="bytes")
    source: FreeText = Field(min_length=1)


class SonicPlatform(Declared):
    platform: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    hwsku: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    source: FreeText = Field(min_length=1, description="upstream file the map was read from")
    runs: list[SonicPortRun] = Field(min_length=1)
    buffers: SonicBuffers | None = None

    @model_validator(mode="after")
    def _distinct(self) -> Self:
        names = [p.name for p in self.ports()]
        if len(set(names)) != len(names):
            raise ValueError("port runs overlap: two ports share a name")
        return self

    def ports(self) -> tuple[SonicPort, ...]:
        return _expand(self._key())

    @property
    def by_name(self) -> dict[str, SonicPort]:
        return _by_name(self._key())

    def _key(self) -> tuple:
        # the expansion is cached on the runs' values, not on the object: model_copy(update=...) keeps
        # an object's __dict__, so a cache stored there would outlive a change of runs
        return tuple((r.ports, r.first_name, r.name_step, r.first_lane, r.lanes, r.lane_step, r.first_index,
                      r.alias, r.speed_gbps, tuple(r.speeds_gbps or (r.speed_gbps,))) for r in self.runs)


@lru_cache(maxsize=64)
def _expand(key: tuple) -> tuple[SonicPort, ...]:
    out: list[SonicPort] = []
    for ports, first_name, name_step, first_lane, lanes, lane_step, first_index, alias, speed, speeds in key:
        for i in range(ports):
            first = first_lane + i * lane_step
            index = first_index + i
            name = f"Ethernet{first_name + i * name_step}"
            out.append(SonicPort(name, ",".join(str(first + k) for k in range(lanes)),
                                 f"{alias}{index}" if alias else name, index, speed, speeds))
    return tuple(out)


@lru_cache(maxsize=64)
def _by_name(key: tuple) -> dict[str, SonicPort]:
    return {p.name: p for p in _expand(key)}
