"""Pulumi components and dynamic providers used by stacks/cluster.

Components (one file per family; they only declare what the Plan says):
  clusterforge:site:Site                 site.py
  clusterforge:network:Network           network.py      one per plane
  clusterforge:su:ScalableUnit           scalable_unit.py
  clusterforge:facility:Rack / Pdu       facility.py
  clusterforge:fabric:Switch             fabric.py
  clusterforge:compute:Server            compute.py
Dynamic resources (providers/): SwitchConfig, HostProvision, Verification, Lab.
`program.declare_cluster` composes them; `automation` drives the engine for the CLI and tests.

Importing this package imports the Pulumi SDK; the CLI imports it only when a Pulumi command runs.
"""

from clusterforge.pulumi.compute import Server, ServerArgs
from clusterforge.pulumi.fabric import Switch, SwitchArgs
from clusterforge.pulumi.facility import Pdu, PduArgs, Rack, RackArgs
from clusterforge.pulumi.network import Network, NetworkArgs
from clusterforge.pulumi.scalable_unit import ScalableUnit, ScalableUnitArgs
from clusterforge.pulumi.site import Site, SiteArgs

__all__ = [
    "Network", "NetworkArgs", "Pdu", "PduArgs", "Rack", "RackArgs", "ScalableUnit", "ScalableUnitArgs",
    "Server", "ServerArgs", "Site", "SiteArgs", "Switch", "SwitchArgs",
]  # fmt: skip
