"""Site and facility limits: power feeds, cooling, racks, floor."""

import math
from typing import Annotated, Literal

from pydantic import Field, field_validator

from clusterforge.model.base import Declared
from clusterforge.model.grammar import ModelKey, Name, Owner
from clusterforge.model.numbers import WHOLE, Integer, Number
from clusterforge.model.timeservers import MAX_TIME_SERVERS, TimeServer

__all__ = ["Feed", "LiquidLoop", "Cooling", "Facility", "Site", "Costs", "THREE_PHASE_FACTOR"]

THREE_PHASE_FACTOR = math.sqrt(3)  # 1.732: line-to-line voltage times current times √3


class Feed(Declared):
    """One power circuit, feeding one PDU; a rack side (A or B) gets up to ``pdus_per_side`` of them.

    The circuit's current may not exceed the PDU model's rating (``model.checks``).
    """

    voltage_v: Number = Field(gt=0, le=1000)
    amperage_a: Number = Field(gt=0, le=1000)
    phases: Annotated[Literal[1, 3], WHOLE] = 3
    max_utilisation: Number = Field(default=0.8, gt=0, le=1.0)

    @property
    def capacity_w(self) -> float:
        factor = THREE_PHASE_FACTOR if self.phases == 3 else 1.0
        return self.voltage_v * self.amperage_a * factor * self.max_utilisation


class LiquidLoop(Declared):
    """Direct liquid cooling: CDUs per row (a row is one SU's compute racks), their redundancy, the
    facility water supply temperature and the loop's temperature rise. plan/liquid.py checks each row."""

    cdu_model: ModelKey
    cdus_per_row: Integer = Field(ge=1, le=64)
    redundancy: Literal["N", "N+1", "N+2", "2N"] = "N+1"
    supply_temperature_c: Number = Field(ge=5, le=60, description="facility water supply to the CDUs")
    delta_t_k: Number = Field(default=10, gt=0, le=40, description="secondary loop temperature rise")
    pue: Number = Field(default=1.1, ge=1.0, le=3.0, description="PUE of the heat taken by liquid")
    leak_detection_price_per_rack: Number = Field(default=1500, ge=0, le=1e7)


class Cooling(Declared):
    air_limit_w: Number = Field(default=25000, gt=0, le=1_000_000)
    liquid: bool = False
    liquid_limit_w: Number = Field(default=0, ge=0, le=1_000_000)
    liquid_loop: LiquidLoop | None = None


class Facility(Declared):
    rack_u: Integer = Field(default=42, ge=10, le=60)
    rack_power_limit_w: Number = Field(default=40000, gt=0, le=1_000_000)
    headroom: Number = Field(default=0.2, ge=0, lt=1)
    feed: Feed
    pdus_per_side: Integer = Field(default=1, ge=1, le=4,
                               description="most PDUs (each on its own feed circuit) per rack side; the plan places"
                                           " as many as each rack's load needs with the headroom")
    redundancy: Literal["A/B", "none"] = "A/B"
    cooling: Cooling = Field(default_factory=Cooling.model_construct)
    rack_max_weight_kg: Number = Field(default=1360, gt=0, le=100_000)
    rack_empty_weight_kg: Number = Field(default=150, ge=0, le=100_000)
    rack_footprint_m2: Number = Field(default=0.72, gt=0, le=100)
    floor_load_kg_m2: Number = Field(default=1500, gt=0, le=1_000_000)
    pdu_model: ModelKey
    reserved_top_u: Integer = Field(default=2, ge=0, le=60,
                                description="U kept free at the top of each rack for ToR switches")
    pue: Number = Field(default=1.3, ge=1.0, le=3.0)


class Costs(Declared):
    """Inputs for TCO estimates."""

    power_price_per_kwh: Number = Field(default=0.12, ge=0, le=100)
    average_load_fraction: Number = Field(default=0.7, gt=0, le=1)
    maintenance_pct_per_year: Number = Field(default=8.0, ge=0, le=100)
    facility_works: Number = Field(default=0.0, ge=0, le=1e12)
    staff_per_year: Number = Field(default=0.0, ge=0, le=1e12)
    licences_per_year: Number = Field(default=0.0, ge=0, le=1e12)
    years: Integer = Field(default=3, ge=1, le=10)


class Site(Declared):
    name: Name
    owner: Owner = "platform-team"
    facility: Facility
    costs: Costs = Field(default_factory=Costs.model_construct)
    # The NTP servers every host's time daemon asks (roles/time_sync, and the installers' drop-in); none
    # declared: the hosts keep their distribution's defaults.
    time_servers: list[TimeServer] = Field(default=[], max_length=MAX_TIME_SERVERS)

    @field_validator("time_servers")
    @classmethod
    def _distinct_servers(cls, value: list[str]) -> list[str]:
        repeated = sorted({server for server in value if value.count(server) > 1})
        if repeated:
            raise ValueError(f"{', '.join(repeated)} listed more than once")
        return value
