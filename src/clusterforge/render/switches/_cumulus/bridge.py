"""bridge: the VLAN-aware bridge, only where the Plan puts hosts in a VLAN or trunks an access plane."""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._cumulus.interface import BRIDGE_DOMAIN
from clusterforge.render.switches._cumulus.schema import NvueBridge
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.vocab import DeviceKind

__all__ = ["bridge", "AGG_STP_PRIORITY"]

# The aggregation pair must win the spanning-tree root election, or a ToR could become root and
# carry transit traffic; 4096 is the lowest non-zero bridge priority step.
AGG_STP_PRIORITY = 4096


def bridge(facts: SwitchFacts, qos: SwitchQos) -> NvueBridge | None:
    if not (facts.svis or facts.access_ports or facts.trunk_ports):
        return None
    device = facts.device
    # aggregation and access cores; a site access switch (a site switch too) faces hosts
    top = device.kind == DeviceKind.MGMT_SWITCH and device.su is None and not facts.access_ports
    return NvueBridge(domain=BRIDGE_DOMAIN, vlans=(facts.plane_vlan,), stp_priority=AGG_STP_PRIORITY if top else None)
