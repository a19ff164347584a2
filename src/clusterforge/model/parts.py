"""Catalog parts that are not servers or switches: NICs, rack power shelves, coolant distribution units."""

from typing import Literal

from pydantic import Field

from clusterforge.model.base import Declared
from clusterforge.model.grammar import FreeText
from clusterforge.model.numbers import Integer, Number

__all__ = ["NicModel", "PowerShelfModel", "CduModel"]


class NicModel(Declared):
    """A network adapter. `ethernet_planes` is how many independent Ethernet links one NIC runs at its
    Ethernet rate: a ConnectX-8 SuperNIC is one 800G port on XDR InfiniBand but 2 x 400GbE on Ethernet,
    so a server with it has two Ethernet planes per GPU (`nics.data.planes: 2`)."""

    vendor: FreeText
    description: FreeText = ""
    kind: Literal["supernic", "dpu", "nic"] = "nic"
    ports: Integer = Field(default=1, ge=1, le=8)
    infiniband_gbps: Integer | None = Field(default=None, gt=0, le=3200, description="top rate per port on InfiniBand")
    ethernet_gbps: Integer = Field(gt=0, le=3200, description="top rate per Ethernet link")
    ethernet_planes: Integer = Field(default=1, ge=1, le=2)
    max_draw_w: Number = Field(gt=0, le=1000)
    price: Number = Field(ge=0, le=1e7)
    source: FreeText = ""


class PowerShelfModel(Declared):
    """A rack power shelf feeding a DC busbar (ORv3/MGX): PSUs of `psu_rating_w`, `psus` of them."""

    vendor: FreeText
    description: FreeText = ""
    psus: Integer = Field(ge=1, le=24)
    psu_rating_w: Number = Field(gt=0, le=100_000)
    height_u: Integer = Field(default=1, ge=1, le=4)
    weight_kg: Number = Field(gt=0, le=1000)
    price: Number = Field(ge=0, le=1e7)
    source: FreeText = ""

    @property
    def rating_w(self) -> float:
        return self.psus * self.psu_rating_w


class CduModel(Declared):
    """A coolant distribution unit: liquid-to-liquid (facility water to the rack loop) or
    liquid-to-air (in-row, rejects to the room). Capacity is at the stated facility supply temperature."""

    vendor: FreeText
    description: FreeText = ""
    kind: Literal["in-row", "in-rack", "facility"] = "in-row"
    heat_exchange: Literal["liquid-to-liquid", "liquid-to-air"] = "liquid-to-liquid"
    capacity_w: Number = Field(gt=0, le=100_000_000)
    rated_supply_c: Number = Field(ge=5, le=60, description="facility water supply temperature the capacity holds at")
    flow_lpm: Number = Field(gt=0, le=1_000_000, description="secondary loop flow at capacity, litres per minute")
    height_u: Integer = Field(default=0, ge=0, le=60, description="U taken in a rack (in-rack CDUs); 0 = own footprint")
    footprint_m2: Number = Field(default=0.0, ge=0, le=100)
    weight_kg: Number = Field(gt=0, le=100_000)
    max_draw_w: Number = Field(default=0, ge=0, le=1_000_000, description="pumps and controls")
    price: Number = Field(ge=0, le=1e9)
    source: FreeText = ""
