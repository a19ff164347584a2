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
    """clusterforge:compute:Server — one server's node in the tree (its name is the device's).

    No outputs are registered: each would be one more engine round trip per server (2,064 at 64 SUs) for
    a copy of the Plan that nothing reads; the Plan (`clusterforge plan`) is where the addresses live.
    """

    def __init__(self, name: str, args: ServerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:compute:Server", name, None, opts)
        self.device = args.device
