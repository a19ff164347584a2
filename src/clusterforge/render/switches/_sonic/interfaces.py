"""Layer-3 interfaces: routed /31 ports, Loopback0 and the management port eth0 in VRF mgmt."""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._sonic.schema import MgmtInterface, MgmtPort, MgmtVrfGlobal, NoFields
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["INTERFACE", "LOOPBACK_INTERFACE", "MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG"]


def INTERFACE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, NoFields] | None:  # noqa: N802 - table name
    out: dict[str, NoFields] = {}
    for port in facts.routed_ports:
        out[port.name] = {}
        out[f"{port.name}|{port.ip}"] = {}
    return out or None


def LOOPBACK_INTERFACE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, NoFields] | None:  # noqa: N802
    loop = facts.loopback
    if loop is None or not loop.ip:
        return None
    return {loop.name: {}, f"{loop.name}|{loop.ip}": {}}


def MGMT_VRF_CONFIG(facts: SwitchFacts, qos: SwitchQos) -> dict[str, MgmtVrfGlobal] | None:  # noqa: N802
    # SONiC's management VRF is always called "mgmt"; enabling it moves eth0 out of the default VRF.
    return {"vrf_global": {"mgmtVrfEnabled": "true"}} if facts.mgmt is not None else None


def MGMT_PORT(facts: SwitchFacts, qos: SwitchQos) -> dict[str, MgmtPort] | None:  # noqa: N802
    mgmt = facts.mgmt
    if mgmt is None:
        return None
    return {mgmt.name: {"admin_status": "up", "alias": mgmt.name, "mtu": str(mgmt.mtu)}}


def MGMT_INTERFACE(facts: SwitchFacts, qos: SwitchQos) -> dict[str, MgmtInterface] | None:  # noqa: N802
    mgmt = facts.mgmt
    if mgmt is None or not mgmt.ip:
        return None
    entry: MgmtInterface = {}
    if mgmt.gateway:
        entry["gwaddr"] = mgmt.gateway
    return {f"{mgmt.name}|{mgmt.ip}": entry}
