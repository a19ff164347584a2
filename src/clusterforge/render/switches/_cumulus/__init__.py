"""Cumulus Linux (NVUE) structured config: one function per top-level key of startup.yaml's `set`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._cumulus.bridge import bridge
from clusterforge.render.switches._cumulus.interface import interface
from clusterforge.render.switches._cumulus.qos import qos
from clusterforge.render.switches._cumulus.router import router, vrf
from clusterforge.render.switches._cumulus.system import system
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.render.switches.nvue_syntax import header_comment, words

__all__ = ["CUMULUS_KEYS", "cumulus_structured_config"]

Key = Callable[[SwitchFacts, SwitchQos], Any]

# Composition order = order of keys under `set:` in startup.yaml.
CUMULUS_KEYS: list[tuple[str, Key]] = [
    ("system", system),
    ("interface", interface),  # lo, eth0 (VRF mgmt), routed swps, VLAN access/trunk swps, SVIs with VRR
    ("bridge", bridge),        # storage leaves and access planes only: the data plane is never bridged
    ("qos", qos),              # RoCE planes: `qos roce` lossless plus the intent's values spelled out
    ("router", router),        # global BGP identity (ASN, router-id)
    ("vrf", vrf),              # BGP sessions and originated prefixes live in VRF default
]


def cumulus_structured_config(facts: SwitchFacts, qos_intent: SwitchQos) -> dict[str, Any]:
    config = {key: value for key, build in CUMULUS_KEYS if (value := build(facts, qos_intent))}
    # the spelling of the plane's declared NVUE release (networks.<plane>.nvue_syntax), not a `set` section
    config["nvue"] = {**words(facts.nvue_syntax), "comment": header_comment(facts.nvue_syntax)}
    return config
