"""hostname, vrf_instances, vlans."""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._eos.schema import EosVlan
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["hostname", "vrf_instances", "vlans"]


def hostname(facts: SwitchFacts, qos: SwitchQos) -> str:
    return facts.name


def vrf_instances(facts: SwitchFacts, qos: SwitchQos) -> tuple[str, ...] | None:
    return (facts.mgmt_vrf,) if facts.mgmt is not None else None


def vlans(facts: SwitchFacts, qos: SwitchQos) -> tuple[EosVlan, ...] | None:
    if not (facts.svis or facts.access_ports or facts.trunk_ports) or facts.device.plane is None:
        return None
    return (EosVlan(facts.plane_vlan, facts.device.plane),)
