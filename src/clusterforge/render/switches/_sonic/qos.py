"""Lossless RoCE tables, read from the Plan's one QoS intent (plan.qos).

RoCE DSCP -> the lossless priority/TC (PFC on it, ECN on its queue); CNP DSCP -> its own TC,
strict priority; everything else -> TC 0. SONiC's stock DSCP_TO_TC_MAP sends DSCP 26 to TC 1
and treats 3/4 as lossless, so a RoCE switch must carry its own map.
All tables apply to RoCE planes only; other planes return None.
"""

from __future__ import annotations

from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches.facts import SwitchFacts

__all__ = [
    "QOS_PROFILE", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
    "CABLE_LENGTH", "PORT_QOS_MAP", "PFC_WD", "WRED_PROFILE", "SCHEDULER", "QUEUE", "dscp_to_tc",
]

QOS_PROFILE = "ROCE"  # name of every map/profile this module emits
WRED_NAME = "ROCE_LOSSLESS"
SCHED_ROCE, SCHED_DEFAULT, SCHED_CNP = "ROCE_DWRR", "DEFAULT_DWRR", "CNP_STRICT"
DEFAULT_TC = 0
TRAFFIC_CLASSES = range(8)
DSCP_VALUES = range(64)


def dscp_to_tc(qos: SwitchQos) -> dict[int, int]:
    """The intent as a full table: RoCE and CNP DSCPs to their priorities, the rest to TC 0."""
    table = dict.fromkeys(DSCP_VALUES, DEFAULT_TC)
    table[qos.roce_dscp] = qos.roce_priority
    table[qos.cnp_dscp] = qos.cnp_priority
    return table


def _ports(facts: SwitchFacts) -> list[str]:
    return [p.name for p in facts.ports] if facts.lossless else []


def DSCP_TO_TC_MAP(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    if not facts.lossless:
        return None
    return {QOS_PROFILE: {str(d): str(tc) for d, tc in dscp_to_tc(qos).items()}}


def TC_TO_QUEUE_MAP(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    if not facts.lossless:
        return None
    return {QOS_PROFILE: {str(tc): str(tc) for tc in TRAFFIC_CLASSES}}


def TC_TO_PRIORITY_GROUP_MAP(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    # the lossless TC gets its own ingress priority group (where PFC headroom lives); the rest share PG 0
    if not facts.lossless:
        return None
    roce = qos.roce_priority
    return {QOS_PROFILE: {str(tc): str(tc if tc == roce else 0) for tc in TRAFFIC_CLASSES}}


def MAP_PFC_PRIORITY_TO_QUEUE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    if not facts.lossless:
        return None
    return {QOS_PROFILE: {str(p): str(p) for p in TRAFFIC_CLASSES}}


def CABLE_LENGTH(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    ports = _ports(facts)
    if not ports:
        return None
    return {QOS_PROFILE: {name: f"{qos.pfc_cable_length_m}m" for name in ports}}


def PORT_QOS_MAP(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    priority = str(qos.roce_priority)
    binding = {
        "dscp_to_tc_map": QOS_PROFILE,
        "tc_to_queue_map": QOS_PROFILE,
        "tc_to_pg_map": QOS_PROFILE,
        "pfc_to_queue_map": QOS_PROFILE,
        "pfc_enable": priority,
        "pfcwd_sw_enable": priority,
    }
    return {name: dict(binding) for name in _ports(facts)} or None


def PFC_WD(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    # one watchdog figure in the intent: detect a stuck lossless queue after it, restore after it
    ms = str(qos.pfc_watchdog_ms)
    return {name: {"action": "drop", "detection_time": ms, "restoration_time": ms} for name in _ports(facts)} or None


def WRED_PROFILE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    if not facts.lossless:
        return None
    return {WRED_NAME: {
        "ecn": "ecn_all",
        "wred_green_enable": "true",
        "green_min_threshold": str(qos.ecn_min_bytes),
        "green_max_threshold": str(qos.ecn_max_bytes),
        "green_drop_probability": str(qos.ecn_probability_pct),
    }}


def SCHEDULER(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    if not facts.lossless:
        return None
    return {
        SCHED_ROCE: {"type": "DWRR", "weight": str(qos.ets_roce_pct)},
        SCHED_DEFAULT: {"type": "DWRR", "weight": str(100 - qos.ets_roce_pct)},
        SCHED_CNP: {"type": "STRICT"},
    }


def QUEUE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any] | None:  # noqa: N802
    roce, cnp = qos.roce_priority, qos.cnp_priority
    out: dict[str, Any] = {}
    for name in _ports(facts):
        out[f"{name}|{DEFAULT_TC}"] = {"scheduler": SCHED_DEFAULT}
        out[f"{name}|{roce}"] = {"scheduler": SCHED_ROCE, "wred_profile": WRED_NAME}
        out[f"{name}|{cnp}"] = {"scheduler": SCHED_CNP}
    return out or None
