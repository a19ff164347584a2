"""Per-switch structured config: the NOS's typed record, each section built by one small pure function.

The builder is the NOS driver's (network_os.DRIVERS, `_<nos>/driver.py`); the record types are each
NOS's `_<nos>/schema.py`."""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._cumulus.schema import CumulusConfig
from clusterforge.render.switches._eos.schema import EosConfig
from clusterforge.render.switches._infiniband.schema import IbConfig
from clusterforge.render.switches._sonic.schema import SonicConfig
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.render.switches.network_os import DRIVERS

__all__ = ["device_structured_config", "StructuredConfig"]

StructuredConfig = SonicConfig | CumulusConfig | EosConfig | IbConfig


def device_structured_config(facts: SwitchFacts, qos: SwitchQos) -> StructuredConfig:
    driver = DRIVERS.get(facts.nos)
    if driver is None:
        raise ValueError(f"{facts.name}: no structured config for NOS {facts.nos!r}")
    config: StructuredConfig = driver.build(facts, qos)
    return config
