"""Site component: the root — networks, the lab (on the lab target), site racks, scalable units."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi

from clusterforge.pulumi.facility import Rack, RackArgs
from clusterforge.pulumi.network import Network, NetworkArgs
from clusterforge.pulumi.providers.lab import Lab, LabArgs
from clusterforge.pulumi.providers.switch_config import SwitchConfig, SwitchConfigArgs
from clusterforge.pulumi.scalable_unit import ScalableUnit, ScalableUnitArgs

__all__ = ["Site", "SiteArgs"]


@dataclass(frozen=True)
class SiteArgs:
    cluster: str
    site: str
    summary: Mapping[str, Any]
    networks: tuple[NetworkArgs, ...]
    racks: tuple[RackArgs, ...]  # site-level racks: spines, aggregation, storage
    units: tuple[ScalableUnitArgs, ...]
    lab: LabArgs | None = None
    fabric_config: SwitchConfigArgs | None = None  # fabric-wide files (the InfiniBand subnet manager's)


class Site(pulumi.ComponentResource):
    """clusterforge:site:Site — one per stack."""

    def __init__(self, name: str, args: SiteArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:site:Site", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.networks = [Network(n.plane, n, child) for n in args.networks]
        self.lab = Lab(args.lab.lab, args.lab, child) if args.lab is not None else None
        self.racks = [Rack(r.rack.name, r, child) for r in args.racks]
        self.fabric_config = (SwitchConfig(f"{name}-fabric-config", args.fabric_config, child)
                              if args.fabric_config is not None else None)
        site_switches = [*self.racks, *([self.fabric_config] if self.fabric_config is not None else [])]
        self.units = [ScalableUnit(f"su{u.su:02d}", u, child, lab=self.lab, after=site_switches) for u in args.units]
        self.register_outputs({
            "cluster": args.cluster, "site": args.site, "summary": dict(args.summary),
            "networks": [n.plane for n in args.networks], "scalable_units": [u.su for u in args.units],
            "site_racks": [r.rack.name for r in args.racks],
            "lab_ssh_config": self.lab.ssh_config if self.lab is not None else None,
        })  # fmt: skip
