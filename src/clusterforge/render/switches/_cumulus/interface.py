"""interface: NVUE interfaces, in port order. Names are spelled the NVUE way (lo, eth0, swpN, vlanN)."""

from __future__ import annotations

from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._cumulus.gateway import svi_entries
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["interface", "BRIDGE_DOMAIN"]

BRIDGE_DOMAIN = "br_default"  # NVUE's one VLAN-aware bridge


def _speed(gbps: int | None) -> str | None:
    return f"{gbps}G" if gbps else None


def _entry(name: str, kind: str, **fields: Any) -> dict[str, Any]:
    """Every entry has every field, so the template never guesses what is absent."""
    entry: dict[str, Any] = {"name": name, "type": kind, "description": "", "addresses": [], "vrf": None,
                             "gateway": None, "vrr": [], "vrrp": [], "mtu": None, "speed": None, "access_vlan": None,
                             "trunk": False, "vlan": None, "pfc_watchdog": False}
    entry.update(fields)
    return entry


def interface(facts: SwitchFacts, qos: SwitchQos) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if facts.loopback is not None and facts.loopback.ip:
        out.append(_entry("lo", "loopback", addresses=[facts.loopback.ip]))
    if facts.mgmt is not None and facts.mgmt.ip:
        out.append(_entry(facts.mgmt.name, "eth", addresses=[facts.mgmt.ip], vrf=facts.mgmt_vrf,
                          gateway=facts.mgmt.gateway))
    access = {p.name for p in facts.access_ports}
    trunk = {p.name for p in facts.trunk_ports}
    for port in facts.ports:
        out.append(_entry(
            port.name, "swp", description=port.description, mtu=port.mtu, speed=_speed(port.speed_gbps),
            addresses=[port.ip] if port.ip else [],
            access_vlan=facts.plane_vlan if port.name in access else None,
            trunk=port.name in trunk, pfc_watchdog=facts.lossless))
    out.extend(_entry(name, "svi", **fields) for name, fields in svi_entries(facts))
    return out
