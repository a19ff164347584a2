"""qos: `qos roce` in lossless mode with the Plan's intent written out, so the intent is reviewable.

Only RoCE planes get it. NVUE's lossless defaults already match the reference values; writing
them out means a changed intent (another DSCP, thresholds) reaches the switch.
"""

from __future__ import annotations

from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["qos"]


def qos(facts: SwitchFacts, intent: SwitchQos) -> dict[str, Any] | None:
    if not facts.lossless:
        return None
    roce, cnp = intent.roce_priority, intent.cnp_priority
    return {
        "roce_mode": "lossless",
        "trust": "l3",
        "dscp_to_priority": {intent.roce_dscp: roce, intent.cnp_dscp: cnp},
        "pfc_priorities": [roce],
        "pfc_cable_length_m": intent.pfc_cable_length_m,
        "ecn": {"traffic_class": roce, "min_bytes": intent.ecn_min_bytes, "max_bytes": intent.ecn_max_bytes,
                "probability_pct": intent.ecn_probability_pct},
        "ets": [
            {"traffic_class": 0, "mode": "dwrr", "bw_percent": 100 - intent.ets_roce_pct},
            {"traffic_class": roce, "mode": "dwrr", "bw_percent": intent.ets_roce_pct},
            {"traffic_class": cnp, "mode": "strict"},
        ],
    }
