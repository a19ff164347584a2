"""Lossless RoCE tables, read from the Plan's one QoS intent (plan.qos).

Shaped as sonic-buildimage's files/build_templates/qos_config.j2 (at 086b03bd70) shapes its AZURE
profile, with our own maps (named ROCE): DSCP_TO_TC_MAP for all 64 DSCPs from the declared policy and
bound `global` as well as per port, TC_TO_PRIORITY_GROUP_MAP, PFC_PRIORITY_TO_PRIORITY_GROUP_MAP
(pfc_to_pg_map, a Mellanox/Barefoot table), a scheduler for every queue 0-7 and WRED with green, yellow
and red as upstream's AZURE_LOSSLESS. Where we differ from AZURE (one lossless priority, not 3 and 4;
RoCE's DSCP 26 not TC 1; every queue scheduled), docs/pfc-headroom.md says why.
All tables apply to RoCE planes only; other planes return None.
"""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._sonic.schema import PfcWatchdog, PortQosMap, QosMap, Queue, Scheduler, WredProfile
from clusterforge.render.switches.facts import SwitchFacts

__all__ = [
    "QOS_PROFILE", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "CABLE_LENGTH", "PORT_QOS_MAP", "PFC_WD", "WRED_PROFILE", "SCHEDULER",
    "QUEUE", "scheduler_name",
]

QOS_PROFILE = "ROCE"  # name of every map/profile this module emits
WRED_NAME = "ROCE_LOSSLESS"
TRAFFIC_CLASSES = range(8)


def _ports(facts: SwitchFacts) -> list[str]:
    return [p.name for p in facts.ports] if facts.lossless else []


def DSCP_TO_TC_MAP(facts: SwitchFacts, qos: SwitchQos) -> dict[str, QosMap] | None:  # noqa: N802
    if not facts.lossless:
        return None
    return {QOS_PROFILE: {str(d): str(tc) for d, tc in enumerate(qos.dscp_to_tc)}}


def TC_TO_QUEUE_MAP(facts: SwitchFacts, qos: SwitchQos) -> dict[str, QosMap] | None:  # noqa: N802
    if not facts.lossless:
        return None
    return {QOS_PROFILE: {str(tc): str(tc) for tc in TRAFFIC_CLASSES}}


def TC_TO_PRIORITY_GROUP_MAP(facts: SwitchFacts, qos: SwitchQos) -> dict[str, QosMap] | None:  # noqa: N802
    # the lossless TC gets its own ingress priority group (where PFC headroom lives); the rest share the
    # lossy PG 0, which BUFFER_PG gives ingress_lossy_profile (AZURE maps TC 7 to a PG 7 without a buffer)
    if not facts.lossless:
        return None
    roce = qos.roce_priority
    return {QOS_PROFILE: {str(tc): str(tc if tc == roce else 0) for tc in TRAFFIC_CLASSES}}


def MAP_PFC_PRIORITY_TO_QUEUE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, QosMap] | None:  # noqa: N802
    if not facts.lossless:
        return None
    return {QOS_PROFILE: {str(p): str(p) for p in TRAFFIC_CLASSES}}


def PFC_PRIORITY_TO_PRIORITY_GROUP_MAP(facts: SwitchFacts, qos: SwitchQos) -> dict[str, QosMap] | None:  # noqa: N802
    # which PG a received PFC priority's headroom is in: the lossless priority only (AZURE: 3 and 4)
    if not facts.lossless:
        return None
    return {QOS_PROFILE: {str(qos.roce_priority): str(qos.roce_priority)}}


def CABLE_LENGTH(facts: SwitchFacts, qos: SwitchQos) -> dict[str, QosMap] | None:  # noqa: N802
    ports = _ports(facts)
    if not ports:
        return None
    return {QOS_PROFILE: {name: f"{qos.pfc_cable_length_m}m" for name in ports}}


def PORT_QOS_MAP(facts: SwitchFacts, qos: SwitchQos) -> dict[str, PortQosMap] | None:  # noqa: N802
    ports = _ports(facts)
    if not ports:
        return None
    priority = str(qos.roce_priority)
    binding: PortQosMap = {
        "dscp_to_tc_map": QOS_PROFILE,
        "tc_to_queue_map": QOS_PROFILE,
        "tc_to_pg_map": QOS_PROFILE,
        "pfc_to_queue_map": QOS_PROFILE,
        "pfc_to_pg_map": QOS_PROFILE,
        "pfc_enable": priority,
        "pfcwd_sw_enable": priority,
    }
    # `global`: the switch-wide DSCP map (upstream binds AZURE there too), for traffic of ports without one
    out: dict[str, PortQosMap] = {"global": {"dscp_to_tc_map": QOS_PROFILE}}
    out.update({name: binding.copy() for name in ports})
    return out


def PFC_WD(facts: SwitchFacts, qos: SwitchQos) -> dict[str, PfcWatchdog] | None:  # noqa: N802
    # one watchdog figure in the intent: detect a stuck lossless queue after it, restore after it
    ms = str(qos.pfc_watchdog_ms)
    return {name: {"action": "drop", "detection_time": ms, "restoration_time": ms} for name in _ports(facts)} or None


def WRED_PROFILE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, WredProfile] | None:  # noqa: N802
    # ECN marking on the RoCE queue; all three colours as upstream's AZURE_LOSSLESS (RoCE is not
    # policed, so it is green, but a marker elsewhere in the path must not turn marking off)
    if not facts.lossless:
        return None
    low, high, pct = str(qos.ecn_min_bytes), str(qos.ecn_max_bytes), str(qos.ecn_probability_pct)
    profile: WredProfile = {
        "ecn": "ecn_all",
        "wred_green_enable": "true", "green_min_threshold": low, "green_max_threshold": high,
        "green_drop_probability": pct,
        "wred_yellow_enable": "true", "yellow_min_threshold": low, "yellow_max_threshold": high,
        "yellow_drop_probability": pct,
        "wred_red_enable": "true", "red_min_threshold": low, "red_max_threshold": high, "red_drop_probability": pct,
    }
    return {WRED_NAME: profile}


def scheduler_name(kind: str, weight: int) -> str:
    return "STRICT" if kind == "strict" else f"DWRR_{weight}"


def SCHEDULER(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Scheduler] | None:  # noqa: N802
    if not facts.lossless:
        return None
    out: dict[str, Scheduler] = {}
    for _, kind, weight in qos.queue_schedule:
        entry: Scheduler = {"type": "STRICT"} if kind == "strict" else {"type": "DWRR", "weight": str(weight)}
        out[scheduler_name(kind, weight)] = entry
    return out


def QUEUE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Queue] | None:  # noqa: N802
    # every queue 0-7 has a scheduler; only the RoCE queue has WRED (ECN marking): the lossy queues
    # tail-drop, the CNP queue carries only congestion notifications, which must not be marked or dropped early
    out: dict[str, Queue] = {}
    for name in _ports(facts):
        for q, kind, weight in qos.queue_schedule:
            entry: Queue = {"scheduler": scheduler_name(kind, weight)}
            if q == qos.roce_priority:
                entry["wred_profile"] = WRED_NAME
            out[f"{name}|{q}"] = entry
    return out or None
