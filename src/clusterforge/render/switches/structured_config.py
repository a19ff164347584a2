"""Per-switch structured config: the NOS's keys, each built by one small pure function from the facts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._cumulus import cumulus_structured_config
from clusterforge.render.switches._eos import eos_structured_config
from clusterforge.render.switches._infiniband import ib_structured_config
from clusterforge.render.switches._sonic import sonic_structured_config
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.vocab import Nos

__all__ = ["device_structured_config", "BUILDERS"]

BUILDERS: dict[str, Callable[[SwitchFacts, dict[str, Any]], dict[str, Any]]] = {
    Nos.SONIC: sonic_structured_config,
    Nos.CUMULUS: cumulus_structured_config,
    Nos.EOS: eos_structured_config,
    Nos.INFINIBAND: ib_structured_config,
}


def device_structured_config(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any]:
    try:
        build = BUILDERS[facts.nos]
    except KeyError:
        raise ValueError(f"{facts.name}: no structured config for NOS {facts.nos!r}") from None
    return build(facts, qos)
