"""Compute component: one server (GPU node or storage server) with its planned addresses."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from clusterforge.plan import Device

__all__ = ["Server", "ServerArgs"]


@dataclass(frozen=True)
class ServerArgs:
    device: Device


class Server(pulumi.ComponentResource):
    """clusterforge:compute:Server — outputs every planned address as one dict {interface: cidr}."""

    def __init__(self, name: str, args: ServerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:compute:Server", name, None, opts)
        device = args.device
        self.register_outputs({
            "kind": device.kind, "model": device.model, "su": device.su, "rack": device.rack, "ru": device.ru,
            "asset_id": device.asset_id, "gpus": device.gpus, "power_w": device.power_w,
            "addresses": {i.name: i.ip for i in device.interfaces if i.ip},
            "planes": {i.name: i.plane for i in device.interfaces},
        })  # fmt: skip
