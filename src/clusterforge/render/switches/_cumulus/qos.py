"""qos: `qos roce` in lossless mode with the Plan's intent written out, so the intent is reviewable.

Only RoCE planes get it. `qos roce` (NVIDIA, Cumulus Linux user guide, "RDMA over Converged
Ethernet - RoCE", default RoCE configuration) maps switch priority 3 to TC 3, 6 to TC 6 and every
other priority to TC 0, gives TC 3 and TC 0 50 % each, and marks ECN on TC 0 and 3. The plan's
intent differs (eight classes, ECN on the RoCE class only: docs/pfc-headroom.md), and NVIDIA's
documentation does not say whether the RoCE profile or an explicit default-global setting wins, so
every value is written for every priority and class; no cell is left to the RoCE profile. From plan.qos:
- all 64 DSCPs mapped (the declared policy): NVUE's own trust-l3 default sends DSCP 24-31 to
  priority 3, the lossless one;
- switch priority N to traffic class N for all eight (`egress-queue-mapping`, the plan's TCs), where
  the RoCE profile folds 0-2, 4, 5 and 7 into TC 0;
- congestion control for every traffic class: ECN with the declared thresholds on the RoCE class,
  `ecn: disable` on the other seven (the RoCE profile, and NVUE's default-global profile even
  without RoCE, mark TC 0; SONiC and EOS mark only the RoCE queue);
- an egress-scheduler entry for every traffic class 0-7 (CNP strict, the rest DWRR summing to 100 %),
  so no class is left with a share of 0;
- the PFC watchdog as declared: NVUE detects a storm after polling-interval x robustness, so the
  two are chosen to give pfc_watchdog_ms (exactly where it divides, never longer).
"""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._cumulus.schema import NvueEcn, NvueEts, NvuePfcWatchdog, NvueQos
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["qos", "watchdog_timers", "POLL_MIN_MS"]

POLL_MIN_MS = 100  # NVUE's smallest (and default) PFC watchdog polling interval


def watchdog_timers(detect_ms: int) -> tuple[int, int]:
    """(polling-interval ms, robustness) whose product is detect_ms or just under it."""
    robustness = max(1, detect_ms // POLL_MIN_MS)
    return detect_ms // robustness, robustness


def qos(facts: SwitchFacts, intent: SwitchQos) -> NvueQos | None:
    if not facts.lossless:
        return None
    roce = intent.roce_priority
    polling, robustness = watchdog_timers(intent.pfc_watchdog_ms)
    ets = tuple(NvueEts(tc, "strict") if kind == "strict" else NvueEts(tc, "dwrr", weight)
                for tc, kind, weight in intent.queue_schedule)
    return NvueQos(
        roce_mode="lossless",
        trust="l3",
        dscp_to_priority=dict(enumerate(intent.dscp_to_tc)),
        priority_to_traffic_class={tc: tc for tc, _kind, _weight in intent.queue_schedule},
        pfc_priorities=(roce,),
        pfc_cable_length_m=intent.pfc_cable_length_m,
        pfc_watchdog=NvuePfcWatchdog(polling_interval_ms=polling, robustness=robustness),
        ecn=tuple(NvueEcn(tc, True, intent.ecn_min_bytes, intent.ecn_max_bytes, intent.ecn_probability_pct)
                  if tc == roce else NvueEcn(tc, False) for tc, _kind, _weight in intent.queue_schedule),
        ets=ets,
    )
