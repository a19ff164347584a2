"""Cumulus Linux (NVUE) structured config: one function per top-level key of startup.yaml's `set`.

The result is a typed `CumulusConfig` (schema.py: one frozen record per section); the field order of
that record is the order of keys under `set:` in startup.yaml.
"""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._cumulus.bridge import bridge
from clusterforge.render.switches._cumulus.interface import interface
from clusterforge.render.switches._cumulus.qos import qos
from clusterforge.render.switches._cumulus.router import router, vrf
from clusterforge.render.switches._cumulus.schema import CumulusConfig, NvueWords
from clusterforge.render.switches._cumulus.system import system
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.render.switches.nvue_syntax import header_comment, words

__all__ = ["cumulus_structured_config"]


def cumulus_structured_config(facts: SwitchFacts, qos_intent: SwitchQos) -> CumulusConfig:
    return CumulusConfig(
        system=system(facts, qos_intent),
        interface=interface(facts, qos_intent),  # lo, eth0 (VRF mgmt), routed swps, VLAN access/trunk swps, SVIs
        bridge=bridge(facts, qos_intent),        # storage leaves and access planes only: data is never bridged
        qos=qos(facts, qos_intent),              # RoCE planes: `qos roce` lossless plus the intent's values spelled out
        router=router(facts, qos_intent),        # global BGP identity (ASN, router-id)
        vrf=vrf(facts, qos_intent),              # BGP sessions and originated prefixes live in VRF default
        # the spelling of the plane's declared NVUE release (networks.<plane>.nvue_syntax), not a `set` section
        nvue=NvueWords(**words(facts.nvue_syntax), comment=header_comment(facts.nvue_syntax)),
    )
