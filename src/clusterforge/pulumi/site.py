"""Site component: the root — networks, the lab (on the lab target), site racks, scalable units, Kubernetes,
Slurm, monitoring."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi

from clusterforge.pulumi.facility import Rack, RackArgs
from clusterforge.pulumi.kube.component import Kubernetes, KubernetesArgs
from clusterforge.pulumi.network import Network, NetworkArgs
from clusterforge.pulumi.providers.host_image import HostImage, HostImageArgs
from clusterforge.pulumi.providers.host_provision import HostProvision, HostProvisionArgs
from clusterforge.pulumi.providers.lab import Lab, LabArgs
from clusterforge.pulumi.providers.metal_server import MetalServer, MetalServerArgs
from clusterforge.pulumi.providers.switch_config import SwitchConfig, SwitchConfigArgs
from clusterforge.pulumi.providers.verification import Verification, VerificationArgs
from clusterforge.pulumi.scalable_unit import ScalableUnit, ScalableUnitArgs
from clusterforge.pulumi.slurm.component import Slurm, SlurmArgs

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
    images: tuple[HostImageArgs, ...] = ()  # golden images the lab's hosts boot (before the lab)
    fabric_config: SwitchConfigArgs | None = None  # fabric-wide files (the InfiniBand subnet manager's)
    # the storage servers (group storage_servers): provisioned before any SU, whose servers mount them
    storage_provision: HostProvisionArgs | None = None
    storage_verification: VerificationArgs | None = None
    kubernetes: KubernetesArgs | None = None  # control nodes declared and provisioning on
    metal: tuple[MetalServerArgs, ...] = ()  # bare-metal servers installed through their BMCs (after the lab)
    slurm: SlurmArgs | None = None  # the declaration asks for Slurm, control nodes declared, provisioning on
    monitoring: HostProvisionArgs | None = None  # the plan has monitoring (a control node), provisioning on


class Site(pulumi.ComponentResource):
    """clusterforge:site:Site — one per stack."""

    def __init__(self, name: str, args: SiteArgs, opts: pulumi.ResourceOptions | None = None,
                 ssh_config: pulumi.Input[str] | None = None) -> None:
        """``ssh_config``: how the hosts are reached where the lab is in another stack (a stack split by SU,
        clusterforge.plan.stacks: the site stack's output, read through a stack reference)."""
        super().__init__("clusterforge:site:Site", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.networks = [Network(n.plane, n, child) for n in args.networks]
        # one after another: every builder lab is on the same address block (clusterforge.lab.builder)
        self.images: list[HostImage] = []
        for i in args.images:
            self.images.append(HostImage(f"image-{i.name}", i, pulumi.ResourceOptions(
                parent=self, depends_on=self.images[-1:])))
        self.lab = (Lab(args.lab.lab, args.lab, pulumi.ResourceOptions(parent=self, depends_on=self.images))
                    if args.lab is not None else None)
        self.metal = [MetalServer(f"metal-{m.server}", m, pulumi.ResourceOptions(
            parent=self, depends_on=[self.lab] if self.lab is not None else [])) for m in args.metal]
        self.racks = [Rack(r.rack.name, r, child) for r in args.racks]
        self.fabric_config = (SwitchConfig(f"{name}-fabric-config", args.fabric_config, child)
                              if args.fabric_config is not None else None)
        ssh = self.lab.ssh_config if self.lab is not None else ssh_config
        site_switches = [*self.racks, *([self.fabric_config] if self.fabric_config is not None else [])]
        self.storage_provision, self.storage_verification = self._storage(args, site_switches, ssh)
        after_storage = [*site_switches, *([self.storage_provision] if self.storage_provision is not None else [])]
        # a unit's provisioning waits for its bare-metal servers' installs (all of them: an install is per host)
        self.units = [ScalableUnit(f"su{u.su:02d}", u, child, lab=self.lab, after=[*after_storage, *self.metal],
                                   ssh_config=ssh)
                      for u in args.units]
        # both schedulers' steps need only the converged hosts, and run side by side (both reach the control node;
        # neither role installs what the other's does): 83 s off a warm lab `up` against Slurm after Kubernetes.
        # They wait for each SU's provisioning, not for its host checks (which the schedulers' roles do not touch:
        # they run beside them); a unit without provisioning is waited for whole.
        converged = [u.provision if u.provision is not None else u for u in self.units]
        after_hosts = [*after_storage, *converged, *([self.lab] if self.lab else [])]
        self.kubernetes = (Kubernetes("kubernetes", args.kubernetes, child,
                                      ssh_config=ssh, after=after_hosts)
                           if args.kubernetes is not None else None)
        self.slurm = (Slurm("slurm", args.slurm, child, after=after_hosts, ssh_config=ssh)
                      if args.slurm is not None else None)
        # after the schedulers' steps, which reach the same control node (apt's lock where nothing is in an image)
        self.monitoring = None
        if args.monitoring is not None:
            schedulers = [s for s in (self.kubernetes, self.slurm) if s is not None]
            m = args.monitoring
            if ssh is not None:
                m = dataclasses.replace(m, ssh_config=ssh)
            self.monitoring = HostProvision("monitoring", m, pulumi.ResourceOptions(
                parent=self, depends_on=[*after_hosts, *schedulers]))
        self.register_outputs({
            "cluster": args.cluster, "site": args.site, "summary": dict(args.summary),
            "networks": [n.plane for n in args.networks], "scalable_units": [u.su for u in args.units],
            "site_racks": [r.rack.name for r in args.racks],
            "lab_ssh_config": self.lab.ssh_config if self.lab is not None else None,
            "kubernetes_api": self.kubernetes.api_server if self.kubernetes is not None else None,
            "storage_verified": ({"passed": self.storage_verification.passed,
                                  "failed": self.storage_verification.failed}
                                 if self.storage_verification is not None else None),
        })  # fmt: skip

    def _storage(self, args: SiteArgs, after: list[pulumi.Resource], ssh: pulumi.Input[str] | None
                 ) -> tuple[HostProvision | None, Verification | None]:
        """The storage servers' provisioning (after the site switches and the lab) and its verification."""
        after = [*after, *([self.lab] if self.lab is not None else [])]
        provision = verification = None
        if args.storage_provision is not None:
            p = args.storage_provision
            if ssh is not None:
                p = dataclasses.replace(p, ssh_config=ssh)
            provision = HostProvision("storage-provision", p, pulumi.ResourceOptions(parent=self, depends_on=after))
        if args.storage_verification is not None:
            v = args.storage_verification
            if provision is not None:
                v = dataclasses.replace(v, provision_runs=provision.runs)
            if ssh is not None:
                v = dataclasses.replace(v, ssh_config=ssh)
            verification = Verification("storage-verify", v, pulumi.ResourceOptions(
                parent=self, depends_on=[provision] if provision is not None else after))
        return provision, verification
