"""system: the hostname."""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._cumulus.schema import NvueSystem
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["system"]


def system(facts: SwitchFacts, qos: SwitchQos) -> NvueSystem:
    return NvueSystem(hostname=facts.name)
