"""The one QoS intent: switch-side lossless RoCE tables and host-side NIC settings, from the declaration."""

from __future__ import annotations

from clusterforge.model import ClusterSpec
from clusterforge.plan.records import HostRoce, SwitchQos
from clusterforge.vocab import Transport

__all__ = ["switch_qos", "host_roce"]


def switch_qos(spec: ClusterSpec) -> SwitchQos:
    q = spec.networks.qos
    return SwitchQos(
        roce_dscp=q.roce_dscp, roce_priority=q.roce_priority, cnp_dscp=q.cnp_dscp, cnp_priority=q.cnp_priority,
        ecn_min_bytes=q.ecn_min_bytes, ecn_max_bytes=q.ecn_max_bytes, ecn_probability_pct=q.ecn_probability_pct,
        pfc_watchdog_ms=q.pfc_watchdog_ms, ets_roce_pct=q.ets_roce_pct, pfc_cable_length_m=q.pfc_cable_length_m,
    )


def host_roce(spec: ClusterSpec) -> HostRoce:
    """Host NIC intent: the ToS byte is DSCP << 2 with ECT(0) set, e.g. 26 -> 106."""
    q = spec.networks.qos
    data = spec.networks.data
    roce = data.transport == Transport.ROCE
    return HostRoce(enabled=roce, trust="dscp", pfc_priority=q.roce_priority, roce_dscp=q.roce_dscp,
                    roce_tos=(q.roce_dscp << 2) | 0b10, cnp_dscp=q.cnp_dscp, ecn=roce, mtu=data.mtu)
