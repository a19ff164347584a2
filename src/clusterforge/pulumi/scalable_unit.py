"""ScalableUnit component: an SU's racks, then its provisioning and verification, in that order."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from clusterforge.pulumi.facility import Rack, RackArgs
from clusterforge.pulumi.providers.host_provision import HostProvision, HostProvisionArgs
from clusterforge.pulumi.providers.lab import Lab
from clusterforge.pulumi.providers.verification import Verification, VerificationArgs

__all__ = ["ScalableUnit", "ScalableUnitArgs"]


@dataclass(frozen=True)
class ScalableUnitArgs:
    su: int
    racks: tuple[RackArgs, ...]
    provision: HostProvisionArgs | None = None  # None: declare the SU only (provisioning switched off)
    verification: VerificationArgs | None = None


class ScalableUnit(pulumi.ComponentResource):
    """clusterforge:su:ScalableUnit — the expansion block; its name is its stable id (su01)."""

    def __init__(self, name: str, args: ScalableUnitArgs, opts: pulumi.ResourceOptions | None = None,
                 lab: Lab | None = None, after: Sequence[pulumi.Resource] = (),
                 ssh_config: pulumi.Input[str] | None = None) -> None:
        """``ssh_config``: how the hosts are reached where the lab is another stack's (its output, read through a
        stack reference); ``lab``'s own when it is in this stack."""
        super().__init__("clusterforge:su:ScalableUnit", name, None, opts)
        self.racks = [Rack(r.rack.name, r, pulumi.ResourceOptions(parent=self)) for r in args.racks]
        self.provision: HostProvision | None = None
        self.verification: Verification | None = None
        # Hosts are provisioned once the switches that reach them carry config (the SU's, and the
        # site's aggregation and spines passed in `after`) and, in the lab, once the hosts exist.
        # Depending on a component waits for every resource under it.
        after = [*after, *self.racks, *([lab] if lab is not None else [])]
        ssh = lab.ssh_config if lab is not None else ssh_config
        if args.provision is not None:
            provision = args.provision
            if ssh is not None:
                provision = dataclasses.replace(provision, ssh_config=ssh)
            self.provision = HostProvision(f"{name}-provision", provision,
                                           pulumi.ResourceOptions(parent=self, depends_on=after))
        if args.verification is not None:
            verification = args.verification
            if self.provision is not None:
                verification = dataclasses.replace(verification, provision_runs=self.provision.runs)
            if ssh is not None:
                verification = dataclasses.replace(verification, ssh_config=ssh)
            depends = [self.provision] if self.provision is not None else after
            self.verification = Verification(f"{name}-verify", verification,
                                             pulumi.ResourceOptions(parent=self, depends_on=depends))
        servers = [s.device for r in args.racks for s in r.servers]
        self.register_outputs({
            "su": args.su, "racks": [r.rack.name for r in args.racks], "servers": [d.name for d in servers],
            "gpus": sum(d.gpus for d in servers),
            "provisioned": self.provision.changed if self.provision is not None else None,
            "verified": ({"passed": self.verification.passed, "failed": self.verification.failed}
                         if self.verification is not None else None),
        })  # fmt: skip
