"""qos and priority_flow_control: the RoCE intent on EOS (RoCE planes only).

Per-port parts (trust, PFC on the RoCE priority, ECN on its unicast queue) are emitted with each
Ethernet interface from the same intent; these are the global parts.
"""

from __future__ import annotations

from typing import Any

from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["qos", "priority_flow_control"]


def qos(facts: SwitchFacts, intent: dict[str, Any]) -> dict[str, Any] | None:
    if not facts.lossless:
        return None
    return {
        "dscp_to_traffic_class": [
            {"dscp": intent["roce_dscp"], "traffic_class": intent["roce_priority"]},
            {"dscp": intent["cnp_dscp"], "traffic_class": intent["cnp_priority"]},
        ],
        "roce_priority": intent["roce_priority"],
        "ecn_min_bytes": intent["ecn_min_bytes"],
        "ecn_max_bytes": intent["ecn_max_bytes"],
        "ecn_probability_pct": intent["ecn_probability_pct"],
    }


def priority_flow_control(facts: SwitchFacts, intent: dict[str, Any]) -> dict[str, Any] | None:
    if not facts.lossless:
        return None
    return {"watchdog_timeout_s": intent["pfc_watchdog_ms"] / 1000, "watchdog_action": "drop"}
