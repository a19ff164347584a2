"""DEVICE_METADATA: hostname, BGP ASN and the SONiC device type of the switch's role."""

from __future__ import annotations

from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["DEVICE_METADATA", "sonic_device_type"]

# SONiC names its tiers from the host side: T0 ToR (server-facing), T1 leaf, T2 spine.
_ROUTED_TYPES = {DeviceKind.LEAF: "ToRRouter", DeviceKind.SPINE: "LeafRouter", DeviceKind.CORE: "SpineRouter"}
_ACCESS_TOR_TYPES = {Plane.MANAGEMENT: "MgmtToRRouter", Plane.OOB: "BmcMgmtToRRouter"}


def sonic_device_type(facts: SwitchFacts) -> str:
    device = facts.device
    if device.kind == DeviceKind.MGMT_SWITCH:
        # ToRs sit in an SU; the aggregation pair is a site switch and is tier 1 of its plane
        return _ACCESS_TOR_TYPES[device.plane] if device.su is not None else "LeafRouter"
    return _ROUTED_TYPES[device.kind]


def DEVICE_METADATA(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any]:  # noqa: N802 - table name
    localhost: dict[str, str] = {
        "hostname": facts.name,
        "type": sonic_device_type(facts),
        # split-unified: FRR config comes from our one frr.conf, not from CONFIG_DB; plain "split" expects one
        # file per daemon and the FRR container's start-up removes a lone frr.conf
        "docker_routing_config_mode": "split-unified",
        "buffer_model": "traditional",  # the BUFFER_* tables are final; buffermgrd does not recompute them
    }
    if facts.device.asn is not None:
        localhost["bgp_asn"] = str(facts.device.asn)
    return {"localhost": localhost}
