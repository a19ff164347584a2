"""Network component: one plane (data, storage, management, oob) as the Plan's fabric summary says."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi

from clusterforge.plan.objects import FabricSummary

__all__ = ["Network", "NetworkArgs"]


@dataclass(frozen=True)
class NetworkArgs:
    plane: str
    fabric: FabricSummary
    pool: Mapping[str, Any] = field(default_factory=dict)
    switches: tuple[str, ...] = ()


class Network(pulumi.ComponentResource):
    """clusterforge:network:Network — one per plane; planes never share a broadcast domain."""

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:network:Network", name, None, opts)
        self.register_outputs({"plane": args.plane, **args.fabric.to_dict(), "pool": dict(args.pool),
                               "switches": list(args.switches)})
