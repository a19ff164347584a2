"""Facility components: a Rack (power, space, cooling as planned) and its A/B PDUs."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from clusterforge.plan import Pdu as PlannedPdu
from clusterforge.plan import Rack as PlannedRack
from clusterforge.pulumi.compute import Server, ServerArgs
from clusterforge.pulumi.fabric import Switch, SwitchArgs

__all__ = ["Pdu", "PduArgs", "Rack", "RackArgs"]


@dataclass(frozen=True)
class PduArgs:
    pdu: PlannedPdu


class Pdu(pulumi.ComponentResource):
    """clusterforge:facility:Pdu — one power distribution unit on feed A or B (no outputs: see Server)."""

    def __init__(self, name: str, args: PduArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:facility:Pdu", name, None, opts)
        self.pdu = args.pdu


@dataclass(frozen=True)
class RackArgs:
    rack: PlannedRack
    pdus: tuple[PduArgs, ...] = ()
    servers: tuple[ServerArgs, ...] = ()
    switches: tuple[SwitchArgs, ...] = ()


class Rack(pulumi.ComponentResource):
    """clusterforge:facility:Rack — a rack with its PDUs, servers and switches as children."""

    def __init__(self, name: str, args: RackArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:facility:Rack", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.pdus = [Pdu(p.pdu.name, p, child) for p in args.pdus]
        self.servers = [Server(s.device.name, s, child) for s in args.servers]
        self.switches = [Switch(s.device.name, s, child) for s in args.switches]
        rack = args.rack
        self.register_outputs({
            "su": rack.su, "role": rack.role, "power_w": round(rack.power_w, 1),
            "budget_w": round(rack.budget_w, 1), "capacity_w": round(rack.capacity_w, 1),
            "cooling": rack.cooling, "used_u": rack.used_u, "rack_u": rack.rack_u,
            "weight_kg": round(rack.weight_kg, 1), "feeds": list(rack.feeds), "pdus": list(rack.pdus),
            "devices": [s.device.name for s in args.servers] + [s.device.name for s in args.switches],
        })  # fmt: skip
