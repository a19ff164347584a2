"""Catalog of hardware models: servers, switches, PDUs. Inventories reference entries by name."""

from functools import partial
from typing import Annotated, Literal

from pydantic import Field, model_validator

from clusterforge.model.base import Declared
from clusterforge.model.grammar import FreeText, GpuModel, ModelKey, NicName, PartNumber, RdmaDevice, Vendor
from clusterforge.model.numbers import WHOLE, Integer, Number
from clusterforge.model.parts import CduModel, NicModel, PowerShelfModel
from clusterforge.model.rackscale import RackSystemModel
from clusterforge.model.sonic_ports import SonicPlatform

__all__ = [
    "CpuSpec", "GpuSpec", "Tflops", "PrecisionFloors", "MeasuredFigures", "AcceptanceFloors", "NicGroup", "ServerNics",
    "Psu",
    "ServerModel", "SwitchModel", "PduModel", "CableModel",
    "Catalog",
]


class Tflops(Declared):
    """Per-GPU dense (non-sparse) peak TFLOPS by precision."""

    fp16: Number = Field(gt=0, le=1e6)
    bf16: Number = Field(gt=0, le=1e6)
    fp32: Number = Field(gt=0, le=1e6)
    tf32: Number = Field(gt=0, le=1e6)
    fp8: Number | None = Field(default=None, gt=0, le=1e6, description="dense FP8 (Hopper and later)")


class PrecisionFloors(Declared):
    """Per-GPU TFLOPS a healthy card reaches (matmul n = 8192), by precision; an absent precision is not gated."""

    fp16: Number | None = Field(default=None, gt=0, le=1e6)
    bf16: Number | None = Field(default=None, gt=0, le=1e6)
    fp32: Number | None = Field(default=None, gt=0, le=1e6)
    tf32: Number | None = Field(default=None, gt=0, le=1e6)
    fp8: Number | None = Field(default=None, gt=0, le=1e6)


class MeasuredFigures(Declared):
    """The lowest figures of the runs a model's floors were derived from (every GPU of every source run)."""

    burst_tflops: PrecisionFloors = Field(default_factory=PrecisionFloors.model_construct)
    sustained_tflops: PrecisionFloors = Field(default_factory=PrecisionFloors.model_construct)
    memory_bandwidth_tbps: Number | None = Field(default=None, gt=0, le=1000)


class AcceptanceFloors(Declared):
    """What `clusterforge accept` gates a GPU of this model on: burst and sustained matmul TFLOPS and
    device copy bandwidth (read + write counted). `basis` says where the figures come from.

    A measured model states its evidence: `measured` (the lowest figures of `source_runs`, acceptance
    reports under docs/acceptance/), `margin` (floor = measured x (1 - margin), rounded down;
    verify/gpu/floors.py), the `card` that gave them, and `held_out_runs` (runs of other cards not used
    to set the floors, which must pass them). A model without `measured` was not measured here, and its
    `basis` says so."""

    burst_tflops: PrecisionFloors = Field(default_factory=PrecisionFloors.model_construct)
    sustained_tflops: PrecisionFloors = Field(default_factory=PrecisionFloors.model_construct)
    memory_bandwidth_tbps: Number | None = Field(default=None, gt=0, le=1000)
    basis: FreeText = ""
    measured: MeasuredFigures | None = Field(default=None, description="lowest figures of the source runs")
    margin: Number | None = Field(default=None, ge=0, le=0.5, description="floor = measured x (1 - margin)")
    source_runs: list[FreeText] = Field(default=[], max_length=32, description="report.json files the"
                                        " measured figures come from (paths under docs/acceptance/)")
    held_out_runs: list[FreeText] = Field(default=[], max_length=32, description="reports of cards not used to"
                                          " set the floors, which must clear them")
    card: FreeText = Field(default="", description="which card(s), driver and date gave the measured figures")

    @model_validator(mode="after")
    def _evidence(self) -> "AcceptanceFloors":
        if self.measured is not None and (self.margin is None or not self.source_runs):
            raise ValueError("measured floors need their margin and source_runs")
        if set(self.source_runs) & set(self.held_out_runs):
            raise ValueError("a held-out run cannot also be a source run (the floors would check their own data)")
        return self


class GpuSpec(Declared):
    model: GpuModel
    count: Integer = Field(ge=0, le=16)
    memory_gb: Number = Field(gt=0, le=100_000)
    tflops_dense: Tflops
    nvswitch: bool = False
    tdp_w: Number = Field(default=700, gt=0, le=10_000)
    memory_bandwidth_tbps: Number | None = Field(default=None, gt=0, le=1000, description="datasheet HBM bandwidth")
    acceptance: AcceptanceFloors | None = None


class CpuSpec(Declared):
    """The CPU topology a Slurm node line states (Sockets, CoresPerSocket, ThreadsPerCore), as the
    spec sheet gives it; ``model`` is for the reader."""

    model: FreeText = ""
    sockets: Integer = Field(ge=1, le=16)
    cores_per_socket: Integer = Field(ge=1, le=1024)
    threads_per_core: Integer = Field(default=2, ge=1, le=8)


class NicGroup(Declared):
    count: Integer = Field(ge=0, le=32)
    speed_gbps: Integer = Field(gt=0, le=3200)
    names: list[NicName] | None = Field(default=None, max_length=32)
    rdma_devices: list[RdmaDevice] | None = Field(default=None, max_length=64, description="the RDMA device of"
                                                  " each port, in rail order (NCCL_IB_HCA); unset: not known")
    model: ModelKey | None = Field(default=None, description="catalog NIC model (catalog.nics)")
    planes: Integer = Field(default=1, ge=1, le=2, description="Ethernet planes per NIC: 2 for a ConnectX-8 on"
                        " Ethernet (2 x 400GbE), each plane its own rail and leaf")

    @property
    def ports(self) -> int:
        """Host interfaces of the group: one per NIC and plane."""
        return self.count * self.planes


class ServerNics(Declared):
    data: NicGroup
    storage: NicGroup = Field(default_factory=partial(NicGroup.model_construct, count=2, speed_gbps=200))
    management: NicGroup = Field(default_factory=partial(NicGroup.model_construct, count=1, speed_gbps=25))
    oob: NicGroup = Field(default_factory=partial(NicGroup.model_construct, count=1, speed_gbps=1))


class Psu(Declared):
    count: Integer = Field(ge=1, le=12)
    rating_w: Number = Field(gt=0, le=100_000)


class ServerModel(Declared):
    vendor: Vendor
    part_number: PartNumber | None = Field(default=None, description="the manufacturer's orderable part number"
                                           " (device-type export); unset: none is exported")
    description: FreeText = ""
    gpu: GpuSpec
    cpu: CpuSpec | None = Field(default=None, description="CPU topology (Slurm node lines)")
    memory_gb: Integer | None = Field(default=None, ge=1, le=1_000_000, description="installed system memory, GiB")
    nics: ServerNics
    psu: Psu
    max_draw_w: Number = Field(gt=0, le=200_000)
    height_u: Integer = Field(ge=1, le=12)
    weight_kg: Number = Field(gt=0, le=10_000)
    price: Number = Field(ge=0, le=1e9)
    source: FreeText = ""
    liquid_fraction: Number = Field(default=0.0, ge=0, le=1, description="share of the heat taken by the liquid"
                                   " loop (direct liquid cooling); the rest goes to air")


class SwitchModel(Declared):
    vendor: Vendor
    part_number: PartNumber | None = Field(default=None, description="the manufacturer's orderable part number"
                                           " (device-type export); unset: none is exported")
    description: FreeText = ""
    ports: Integer = Field(ge=4, le=4096, description="front-panel ports (modular chassis: all line cards)")
    speed_gbps: Integer = Field(gt=0, le=3200)
    transport: Literal["ethernet", "infiniband"] = "ethernet"
    lanes_per_port: Integer = Field(default=8, ge=1, le=8, description="SerDes lanes per port (SONiC port naming)")
    uplinks: Integer = Field(default=0, ge=0, le=16, description="dedicated uplink ports beyond `ports` (ToR models)")
    uplink_speed_gbps: Integer | None = Field(default=None, gt=0, le=3200)
    sonic: SonicPlatform | None = Field(default=None, description="SONiC platform port map (port_config.ini)")
    eos_queue: Literal["uc-tx-queue", "tx-queue"] = Field(
        default="tx-queue", description="EOS egress queue keyword: uc-tx-queue where the ASIC has separate unicast"
        " and multicast queues (Trident/Tomahawk: 7050X, 7060X, 7260X), tx-queue where it has one family (Jericho)")
    max_draw_w: Number = Field(gt=0, le=200_000)
    height_u: Integer = Field(ge=1, le=32)
    weight_kg: Number = Field(gt=0, le=10_000)
    price: Number = Field(ge=0, le=1e9)
    source: FreeText = ""


class PduModel(Declared):
    vendor: Vendor
    part_number: PartNumber | None = Field(default=None, description="the manufacturer's orderable part number"
                                           " (device-type export); unset: none is exported")
    description: FreeText = ""
    outlets: Integer = Field(ge=1, le=96)
    phases: Annotated[Literal[1, 3], WHOLE] = 3
    rating_a: Number = Field(gt=0, le=1000)
    voltage_v: Number = Field(gt=0, le=1000)
    height_u: Integer = Field(default=0, ge=0, le=2, description="0 = zero-U vertical PDU")
    weight_kg: Number = Field(gt=0, le=1000)
    price: Number = Field(ge=0, le=1e9)
    source: FreeText = ""


class CableModel(Declared):
    """A cable or optic class: dac (in rack), aoc (in row), fibre (beyond; needs 2 transceivers), cat6."""

    description: FreeText = ""
    price: Number = Field(ge=0, le=1e9)
    max_length_m: Number = Field(gt=0, le=100_000)
    source: FreeText = ""


class Catalog(Declared):
    cables: dict[ModelKey, CableModel] = {}
    servers: dict[ModelKey, ServerModel] = {}
    switches: dict[ModelKey, SwitchModel] = {}
    pdus: dict[ModelKey, PduModel] = {}
    nics: dict[ModelKey, NicModel] = {}
    power_shelves: dict[ModelKey, PowerShelfModel] = {}
    cdus: dict[ModelKey, CduModel] = {}
    rack_systems: dict[ModelKey, RackSystemModel] = {}
