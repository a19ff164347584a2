"""hostname: the switch's Plan name."""

from __future__ import annotations

from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["hostname"]


def hostname(facts: SwitchFacts) -> str:
    return facts.name
