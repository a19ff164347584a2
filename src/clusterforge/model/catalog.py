"""Catalog of hardware models: servers, switches, PDUs. Inventories reference entries by name."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from clusterforge.model.base import Declared

__all__ = [
    "GpuSpec", "Tflops", "NicGroup", "ServerNics", "Psu", "ServerModel", "SwitchModel", "PduModel", "CableModel",
    "Catalog",
]


class Tflops(Declared):
    """Per-GPU dense (non-sparse) peak TFLOPS by precision."""

    fp16: float = Field(gt=0)
    bf16: float = Field(gt=0)
    fp32: float = Field(gt=0)
    tf32: float = Field(gt=0)


class GpuSpec(Declared):
    model: str
    count: int = Field(ge=0, le=16)
    memory_gb: float = Field(gt=0)
    tflops_dense: Tflops
    nvswitch: bool = False
    tdp_w: float = Field(default=700, gt=0)


class NicGroup(Declared):
    count: int = Field(ge=0, le=32)
    speed_gbps: int = Field(gt=0)
    names: list[str] | None = None


class ServerNics(Declared):
    data: NicGroup
    storage: NicGroup = NicGroup(count=2, speed_gbps=200)
    management: NicGroup = NicGroup(count=1, speed_gbps=25)
    oob: NicGroup = NicGroup(count=1, speed_gbps=1)


class Psu(Declared):
    count: int = Field(ge=1, le=12)
    rating_w: float = Field(gt=0)


class ServerModel(Declared):
    vendor: str
    description: str = ""
    gpu: GpuSpec
    nics: ServerNics
    psu: Psu
    max_draw_w: float = Field(gt=0)
    height_u: int = Field(ge=1, le=12)
    weight_kg: float = Field(gt=0)
    price: float = Field(ge=0)
    source: str = ""


class SwitchModel(Declared):
    vendor: str
    description: str = ""
    ports: int = Field(ge=4, le=4096, description="front-panel ports (modular chassis: all line cards)")
    speed_gbps: int = Field(gt=0)
    transport: Literal["ethernet", "infiniband"] = "ethernet"
    lanes_per_port: int = Field(default=8, ge=1, le=8, description="SerDes lanes per port (SONiC port naming)")
    uplinks: int = Field(default=0, ge=0, le=16, description="dedicated uplink ports beyond `ports` (ToR models)")
    uplink_speed_gbps: int | None = None
    max_draw_w: float = Field(gt=0)
    height_u: int = Field(ge=1, le=32)
    weight_kg: float = Field(gt=0)
    price: float = Field(ge=0)
    source: str = ""


class PduModel(Declared):
    vendor: str
    description: str = ""
    outlets: int = Field(ge=1, le=96)
    phases: Literal[1, 3] = 3
    rating_a: float = Field(gt=0)
    voltage_v: float = Field(gt=0)
    height_u: int = Field(default=0, ge=0, le=2, description="0 = zero-U vertical PDU")
    weight_kg: float = Field(gt=0)
    price: float = Field(ge=0)
    source: str = ""


class CableModel(Declared):
    """A cable or optic class: dac (in rack), aoc (in row), fibre (beyond; needs 2 transceivers), cat6."""

    description: str = ""
    price: float = Field(ge=0)
    max_length_m: float = Field(gt=0)
    source: str = ""


class Catalog(Declared):
    cables: dict[str, CableModel] = {}
    servers: dict[str, ServerModel] = {}
    switches: dict[str, SwitchModel] = {}
    pdus: dict[str, PduModel] = {}
