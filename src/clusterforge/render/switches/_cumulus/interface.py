"""interface: NVUE interfaces, in port order. Names are spelled the NVUE way (lo, eth0, swpN, vlanN)."""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._cumulus.gateway import svi_entries
from clusterforge.render.switches._cumulus.schema import NvueInterface
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["interface", "BRIDGE_DOMAIN"]

BRIDGE_DOMAIN = "br_default"  # NVUE's one VLAN-aware bridge


def _speed(gbps: int | None) -> str | None:
    return f"{gbps}G" if gbps else None


def interface(facts: SwitchFacts, qos: SwitchQos) -> tuple[NvueInterface, ...]:
    out: list[NvueInterface] = []
    if facts.loopback is not None and facts.loopback.ip:
        out.append(NvueInterface("lo", "loopback", addresses=(facts.loopback.ip,)))
    if facts.mgmt is not None and facts.mgmt.ip:
        out.append(NvueInterface(facts.mgmt.name, "eth", addresses=(facts.mgmt.ip,), vrf=facts.mgmt_vrf,
                                 gateway=facts.mgmt.gateway))
    access = {p.name for p in facts.access_ports}
    trunk = {p.name for p in facts.trunk_ports}
    for port in facts.ports:
        out.append(NvueInterface(
            port.name, "swp", description=port.description, mtu=port.mtu, speed=_speed(port.speed_gbps),
            addresses=(port.ip,) if port.ip else (),
            access_vlan=facts.plane_vlan if port.name in access else None,
            trunk=port.name in trunk, pfc_watchdog=facts.lossless))
    out.extend(svi_entries(facts))
    return tuple(out)
