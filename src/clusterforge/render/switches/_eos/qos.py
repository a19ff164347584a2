"""qos, qos_profiles and priority_flow_control: the RoCE intent on EOS (RoCE planes only).

Per-port parts (trust, PFC on the RoCE priority, ECN and its counters on its queue, the service profile)
are emitted with each Ethernet interface from the same intent; these are the global parts.
- DSCP -> traffic class for all 64 DSCPs (plan.qos.dscp_map, the declared policy): EOS's own default
  map sends DSCP 24-31 to TC 3, the lossless class, so every DSCP is written, grouped by class.
- a scheduler decision for every queue 0-7 (plan.qos.queue_schedule): the CNP queue strict, the RoCE
  queue and the six lossy queues by DWRR weight (bandwidth percent). EOS serves `priority strict`
  queues before the round-robin ones.
- the queue keyword is the platform's (catalog `eos_queue`): Trident/Tomahawk switches such as the
  7060DX5 have unicast and multicast egress queues (`uc-tx-queue`), Jericho ones a single family
  (`tx-queue`); profile and interfaces use the same one.
- the PFC watchdog on every lossless port, not only its global defaults: the profile every lossless
  port applies enables it (`priority-flow-control pause watchdog`) with the timings SONiC's PFC_WD and
  NVUE's pfc-watchdog get from the same `pfc_watchdog_ms` (detect after it, recover after it, drop),
  the polling interval left to EOS (`auto`: chosen from timeout and recovery time) as SONiC leaves it
  to its default. EOS takes seconds with at most two decimals, so the figure is rounded down to
  10 ms, never longer (as NVUE's polling x robustness).
- `dcbx mode ieee` on every lossless port (EosQos.dcbx_mode): IEEE DCBX advertises the port's PFC
  configuration in LLDP so a willing host NIC takes PFC on the RoCE priority.
"""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._eos.schema import (
    EosDscpLine,
    EosPfcWatchdog,
    EosPriorityFlowControl,
    EosQos,
    EosQosProfile,
    EosTxQueue,
)
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["qos", "priority_flow_control", "qos_profiles", "eos_seconds", "QOS_PROFILE", "DSCPS_PER_LINE",
           "WATCHDOG_ACTION"]

QOS_PROFILE = "ROCE"  # the service profile every lossless port applies
DSCPS_PER_LINE = 8  # one `qos map dscp ...` line per class and octet of DSCPs
WATCHDOG_ACTION = "drop"  # as SONiC's PFC_WD action: drop on the stuck queue, the port stays up


def eos_seconds(ms: int) -> str:
    """ms as EOS's watchdog timers take it: seconds with at most two decimals, rounded down to 10 ms."""
    centis = ms // 10
    whole, frac = divmod(centis, 100)
    return f"{whole}.{frac:02d}".rstrip("0").rstrip(".") if frac else str(whole)


def _dscp_lines(intent: SwitchQos) -> tuple[EosDscpLine, ...]:
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in enumerate(intent.dscp_to_tc):
        by_tc.setdefault(tc, []).append(dscp)
    out = []
    for tc in sorted(by_tc):
        dscps = by_tc[tc]
        for i in range(0, len(dscps), DSCPS_PER_LINE):
            out.append(EosDscpLine(tuple(dscps[i:i + DSCPS_PER_LINE]), tc))
    return tuple(out)


def qos(facts: SwitchFacts, intent: SwitchQos) -> EosQos | None:
    if not facts.lossless:
        return None
    return EosQos(
        dscp_to_traffic_class=_dscp_lines(intent),
        roce_priority=intent.roce_priority,
        ecn_min_bytes=intent.ecn_min_bytes,
        ecn_max_bytes=intent.ecn_max_bytes,
        ecn_probability_pct=intent.ecn_probability_pct,
        queue_keyword=facts.eos_queue,
    )


def priority_flow_control(facts: SwitchFacts, intent: SwitchQos) -> EosPriorityFlowControl | None:
    if not facts.lossless:
        return None
    return EosPriorityFlowControl(watchdog_timeout_s=eos_seconds(intent.pfc_watchdog_ms),
                                  watchdog_action=WATCHDOG_ACTION)


def qos_profiles(facts: SwitchFacts, intent: SwitchQos) -> tuple[EosQosProfile, ...] | None:
    if not facts.lossless:
        return None
    queues = tuple(EosTxQueue(q, "priority strict") if kind == "strict" else
                   EosTxQueue(q, "no priority", bandwidth_percent=weight)
                   for q, kind, weight in intent.queue_schedule)
    seconds = eos_seconds(intent.pfc_watchdog_ms)
    watchdog = EosPfcWatchdog(timeout_s=seconds, polling_interval="auto", recovery_time_s=seconds,
                              action=WATCHDOG_ACTION)
    return (EosQosProfile(QOS_PROFILE, facts.eos_queue, queues, watchdog),)
