"""Per-switch structured config: the NOS's keys, each built by one small pure function from the facts.

The builder is the NOS driver's (network_os.DRIVERS, `_<nos>/driver.py`)."""

from __future__ import annotations

from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.render.switches.network_os import DRIVERS

__all__ = ["device_structured_config"]


def device_structured_config(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any]:
    driver = DRIVERS.get(facts.nos)
    if driver is None:
        raise ValueError(f"{facts.name}: no structured config for NOS {facts.nos!r}")
    return driver.build(facts, qos)
