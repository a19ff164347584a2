"""The one QoS intent: switch-side lossless RoCE tables and host-side NIC settings, from the declaration.

Two tables every NOS renders follow from it (docs/pfc-headroom.md, "DSCP policy" and "Queues"):
- DSCP -> traffic class for all 64 DSCPs: the RoCE DSCP to the lossless priority, the CNP DSCP to the
  CNP priority, every other DSCP by `dscp_policy` ("precedence": DSCP >> 3, the class selector, as
  NVIDIA's and Arista's default trust maps do, so the RoCE DSCP's whole class (24-31 for 26) is
  lossless on every NOS; "best_effort": TC 0), except that a DSCP that would land in the CNP class goes
  to TC 0: only CNPs may enter the strict queue, which could otherwise starve the rest.
- a scheduler for every queue 0-7: CNP strict; RoCE DWRR `ets_roce_pct`; the six lossy queues split
  the rest by DWRR, queue 0 taking the remainder, so the weights are percentages summing to 100.
"""

from __future__ import annotations

from clusterforge.model import ClusterSpec
from clusterforge.plan.records import HostRoce, SwitchQos
from clusterforge.vocab import Transport

__all__ = ["switch_qos", "host_roce", "dscp_map", "queue_schedule", "QUEUES", "DSCPS", "DEFAULT_TC"]

QUEUES, DSCPS, DEFAULT_TC = range(8), range(64), 0


def dscp_map(policy: str, roce_dscp: int, roce_tc: int, cnp_dscp: int, cnp_tc: int) -> tuple[int, ...]:
    table = []
    for dscp in DSCPS:
        tc = dscp >> 3 if policy == "precedence" else DEFAULT_TC
        if tc == cnp_tc:
            tc = DEFAULT_TC
        table.append(tc)
    table[roce_dscp], table[cnp_dscp] = roce_tc, cnp_tc
    return tuple(table)


def queue_schedule(roce_q: int, cnp_q: int, roce_pct: int) -> tuple[tuple[int, str, int], ...]:
    lossy = [q for q in QUEUES if q not in (roce_q, cnp_q)]
    each, rest = divmod(100 - roce_pct, len(lossy))
    out = []
    for q in QUEUES:
        if q == cnp_q:
            out.append((q, "strict", 0))
        elif q == roce_q:
            out.append((q, "dwrr", roce_pct))
        else:
            out.append((q, "dwrr", each + (rest if q == lossy[0] else 0)))
    return tuple(out)


def switch_qos(spec: ClusterSpec) -> SwitchQos:
    q = spec.networks.qos
    return SwitchQos(
        roce_dscp=q.roce_dscp, roce_priority=q.roce_priority, cnp_dscp=q.cnp_dscp, cnp_priority=q.cnp_priority,
        ecn_min_bytes=q.ecn_min_bytes, ecn_max_bytes=q.ecn_max_bytes, ecn_probability_pct=q.ecn_probability_pct,
        pfc_watchdog_ms=q.pfc_watchdog_ms, ets_roce_pct=q.ets_roce_pct, pfc_cable_length_m=q.pfc_cable_length_m,
        dscp_policy=q.dscp_policy,
        dscp_to_tc=dscp_map(q.dscp_policy, q.roce_dscp, q.roce_priority, q.cnp_dscp, q.cnp_priority),
        queue_schedule=queue_schedule(q.roce_priority, q.cnp_priority, q.ets_roce_pct),
    )


def host_roce(spec: ClusterSpec) -> HostRoce:
    """Host NIC intent: the ToS byte is DSCP << 2 with ECT(0) set, e.g. 26 -> 106."""
    q = spec.networks.qos
    data = spec.networks.data
    roce = data.transport == Transport.ROCE
    return HostRoce(enabled=roce, trust="dscp", pfc_priority=q.roce_priority, roce_dscp=q.roce_dscp,
                    roce_tos=(q.roce_dscp << 2) | 0b10, cnp_dscp=q.cnp_dscp, ecn=roce, mtu=data.mtu)
