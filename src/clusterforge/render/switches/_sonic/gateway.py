"""First hops on SONiC, as the Plan's gateway record decides them (plan/gateways.py).

Anycast (storage): the gateway address on the SVI beside the switch's own, the SVI's
`static_anycast_gateway` on, and the one shared MAC in SAG|GLOBAL gateway_mac
(sonic-static-anycast-gateway.yang and sonic-vlan.yang, sonic-buildimage 086b03bd70; intfmgrd
gives a SAG SVI that MAC). Single (an access plane on SONiC: no VRRP model): the gateway as a
plain address of the one switch that carries it.
"""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._sonic.schema import Sag, VlanInterface
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.vocab import GatewayMethod

__all__ = ["SAG", "gateway_vlan_interfaces"]


def _anycast(facts: SwitchFacts) -> bool:
    return bool(facts.first_hops) and facts.gateway is not None and facts.gateway.method == GatewayMethod.ANYCAST


def SAG(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Sag] | None:  # noqa: N802 - table name
    if not _anycast(facts) or facts.gateway is None or not facts.gateway.virtual_mac:
        return None
    return {"GLOBAL": {"gateway_mac": facts.gateway.virtual_mac}}


def gateway_vlan_interfaces(facts: SwitchFacts) -> dict[str, VlanInterface]:
    """VLAN_INTERFACE entries for the switch's first hops: the SVI, its own address, the gateway."""
    out: dict[str, VlanInterface] = {}
    for name, hops in facts.gateway_svis.items():
        out[name] = {"static_anycast_gateway": "true"} if _anycast(facts) else {}
        for hop in hops:
            out[f"{name}|{hop.address}"] = {}
            out[f"{name}|{hop.vip}"] = {}
    return out
