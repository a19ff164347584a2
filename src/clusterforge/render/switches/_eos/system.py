"""hostname, vrf_instances, vlans."""

from __future__ import annotations

from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["hostname", "vrf_instances", "vlans"]


def hostname(facts: SwitchFacts, qos: SwitchQos) -> str:
    return facts.name


def vrf_instances(facts: SwitchFacts, qos: SwitchQos) -> list[str] | None:
    return [facts.mgmt_vrf] if facts.mgmt is not None else None


def vlans(facts: SwitchFacts, qos: SwitchQos) -> list[dict[str, Any]] | None:
    if not (facts.svis or facts.access_ports or facts.trunk_ports):
        return None
    return [{"id": facts.plane_vlan, "name": facts.device.plane}]
