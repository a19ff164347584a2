"""system: the hostname."""

from __future__ import annotations

from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["system"]


def system(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any]:
    return {"hostname": facts.name}
