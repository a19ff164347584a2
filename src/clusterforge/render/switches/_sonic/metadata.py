"""DEVICE_METADATA: hostname, BGP ASN, the SONiC device type of the switch's role, platform and HWSKU, buffer model.

platform and hwsku are the catalog's (the HWSKU folder the port map and buffers come from), as
`sonic-cfggen -H -k HWSKU` writes them. `mac` is the switch's own: sonic-cfggen reads it from the
system EEPROM at first boot, no declaration knows it, and the apply step keeps the running value
(DEVICE_METADATA is merged field by field, pulumi/providers/switch_apply.py).
"""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._sonic.schema import DeviceMetadata
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["DEVICE_METADATA", "sonic_device_type"]

# SONiC names its tiers from the host side: T0 ToR (server-facing), T1 leaf, T2 spine.
_ROUTED_TYPES = {DeviceKind.LEAF: "ToRRouter", DeviceKind.SPINE: "LeafRouter", DeviceKind.CORE: "SpineRouter"}
_ACCESS_TOR_TYPES: dict[str | None, str] = {Plane.MANAGEMENT: "MgmtToRRouter", Plane.OOB: "BmcMgmtToRRouter"}


def sonic_device_type(facts: SwitchFacts) -> str:
    device = facts.device
    if device.kind == DeviceKind.MGMT_SWITCH:
        # ToRs face hosts (in an SU, or the site access switches); the aggregation pair is tier 1 of its plane
        return _ACCESS_TOR_TYPES[device.plane] if device.su is not None or facts.access_ports else "LeafRouter"
    return _ROUTED_TYPES[device.kind]


def DEVICE_METADATA(facts: SwitchFacts, qos: SwitchQos) -> dict[str, DeviceMetadata]:  # noqa: N802 - table name
    localhost: DeviceMetadata = {
        "hostname": facts.name,
        "type": sonic_device_type(facts),
        # split-unified: FRR config comes from our one frr.conf, not from CONFIG_DB; plain "split" expects one
        # file per daemon and the FRR container's start-up removes a lone frr.conf
        "docker_routing_config_mode": "split-unified",
        # dynamic where we render the buffer tables: buffermgrd computes each lossless PG's headroom and the
        # pools (buffers.py); elsewhere the switch keeps its own traditional tables
        "buffer_model": "dynamic" if facts.lossless and facts.ports else "traditional",
    }
    if facts.sonic_platform is not None:
        localhost["platform"] = facts.sonic_platform.platform
        localhost["hwsku"] = facts.sonic_platform.hwsku
    if facts.device.asn is not None:
        localhost["bgp_asn"] = str(facts.device.asn)
    return {"localhost": localhost}
