"""qos, qos_profiles and priority_flow_control: the RoCE intent on EOS (RoCE planes only).

Per-port parts (trust, PFC on the RoCE priority, ECN on its unicast queue, the service profile)
are emitted with each Ethernet interface from the same intent; these are the global parts.
ETS as on SONiC and NVUE: the RoCE queue and the default queue share the link by DWRR weight
(ets_roce_pct and the rest), the CNP queue is strict priority so congestion notifications are
never queued behind data. EOS serves `priority strict` queues before the round-robin ones.
"""

from __future__ import annotations

from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["qos", "priority_flow_control", "qos_profiles", "QOS_PROFILE"]

QOS_PROFILE = "ROCE"  # the service profile every lossless port applies


def qos(facts: SwitchFacts, intent: SwitchQos) -> dict[str, Any] | None:
    if not facts.lossless:
        return None
    return {
        "dscp_to_traffic_class": [
            {"dscp": intent.roce_dscp, "traffic_class": intent.roce_priority},
            {"dscp": intent.cnp_dscp, "traffic_class": intent.cnp_priority},
        ],
        "roce_priority": intent.roce_priority,
        "ecn_min_bytes": intent.ecn_min_bytes,
        "ecn_max_bytes": intent.ecn_max_bytes,
        "ecn_probability_pct": intent.ecn_probability_pct,
    }


def priority_flow_control(facts: SwitchFacts, intent: SwitchQos) -> dict[str, Any] | None:
    if not facts.lossless:
        return None
    return {"watchdog_timeout_s": intent.pfc_watchdog_ms / 1000, "watchdog_action": "drop"}


def qos_profiles(facts: SwitchFacts, intent: SwitchQos) -> list[dict[str, Any]] | None:
    if not facts.lossless:
        return None
    roce, cnp, default = intent.roce_priority, intent.cnp_priority, 0
    queues = [
        {"id": default, "bandwidth_percent": 100 - intent.ets_roce_pct, "priority": "no priority"},
        {"id": roce, "bandwidth_percent": intent.ets_roce_pct, "priority": "no priority"},
        {"id": cnp, "priority": "priority strict"},
    ]
    return [{"name": QOS_PROFILE, "tx_queues": sorted(queues, key=lambda q: q["id"])}]
