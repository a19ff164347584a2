"""Rack-scale systems (GB200/GB300 NVL72): the rack is the unit the vendor sells and the plan places.

A rack system names its compute tray (a catalog server model: the tray is the host that gets
addresses, a BMC and roles), the NVLink switch trays that join every GPU of the rack into one NVLink
domain, and the power shelves feeding the rack's DC busbar, each run of them at fixed U positions.
"""

from typing import Literal, Self

from pydantic import Field, model_validator

from clusterforge.model.base import Declared
from clusterforge.model.grammar import FreeText, ModelKey
from clusterforge.model.numbers import Integer, Number

__all__ = ["TrayRun", "NvlinkSwitchTray", "RackSystemModel", "TRAY_KINDS"]

TRAY_KINDS = ("compute", "nvlink-switch", "power-shelf")


class TrayRun(Declared):
    """`count` trays of one kind, the first at U `first_u` (1 = bottom), each `height_u` high."""

    kind: Literal["compute", "nvlink-switch", "power-shelf"]
    count: Integer = Field(ge=1, le=64)
    first_u: Integer = Field(ge=1, le=60)
    height_u: Integer = Field(default=1, ge=1, le=8)

    @property
    def positions(self) -> tuple[int, ...]:
        return tuple(self.first_u + k * self.height_u for k in range(self.count))


class NvlinkSwitchTray(Declared):
    """One NVLink switch tray: NVSwitch chips joining the rack's GPUs (not an Ethernet/InfiniBand switch)."""

    description: FreeText = ""
    nvswitch_chips: Integer = Field(ge=1, le=8)
    max_draw_w: Number = Field(gt=0, le=20_000)
    weight_kg: Number = Field(gt=0, le=500)


class RackSystemModel(Declared):
    vendor: FreeText
    description: FreeText = ""
    status: Literal["shipping", "announced"] = "shipping"
    compute_tray: ModelKey = Field(description="catalog server model of one compute tray")
    nvlink_switch_tray: NvlinkSwitchTray
    power_shelf: ModelKey = Field(description="catalog power-shelf model")
    power_redundancy: Literal["N+N", "N+1", "N"] = "N+N"
    layout: list[TrayRun] = Field(min_length=1, max_length=16)
    rack_u: Integer = Field(default=48, ge=10, le=60, description="rack height (MGX racks are 48U)")
    peak_w: Number = Field(gt=0, le=1_000_000, description="the vendor's peak (max) rack draw")
    transient_factor: Number = Field(default=1.0, ge=1.0, le=3.0, description="short power excursions above peak,"
                                    " as a factor the power shelves must ride through")
    liquid_fraction: Number = Field(ge=0, le=1, description="share of the rack's heat to the liquid loop")
    rack_weight_kg: Number = Field(gt=0, le=10_000, description="the integrated rack, filled")
    footprint_m2: Number = Field(gt=0, le=10)
    nvlink_gpus: Integer = Field(ge=1, le=1024, description="GPUs in the rack's one NVLink domain")
    manifold_price: Number = Field(default=0, ge=0, le=1e8, description="rack manifold and quick disconnects")
    price: Number = Field(ge=0, le=1e10, description="the whole rack")
    source: FreeText = ""

    def trays(self, kind: str) -> tuple[int, ...]:
        """U positions of every tray of one kind, bottom up."""
        return tuple(u for run in self.layout if run.kind == kind for u in run.positions)

    @model_validator(mode="after")
    def _layout_fits(self) -> Self:
        used: dict[int, str] = {}
        for run in self.layout:
            for u in run.positions:
                for k in range(run.height_u):
                    if u + k > self.rack_u:
                        raise ValueError(f"layout: a {run.kind} tray at U{u} runs past the rack's {self.rack_u} U")
                    if u + k in used:
                        raise ValueError(f"layout: U{u + k} holds both a {used[u + k]} and a {run.kind} tray")
                    used[u + k] = run.kind
        if not self.trays("compute"):
            raise ValueError("layout: a rack system needs compute trays")
        return self
