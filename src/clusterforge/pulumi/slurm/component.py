"""Slurm component: the controller on the control node and slurmd on the GPU servers, side by side.

MungeKey generates the cluster's MUNGE key (a secret); two HostProvisions run playbooks/slurm.yml, one
over the `slurm_controller` group (MUNGE, MariaDB, slurmdbd, slurmctld, the accounts) and, at the same
time, one over `slurm_nodes` (MUNGE, slurmd), each with the key as a secret extra var. A slurmd that
starts before slurmctld answers the controller's registration request when it comes up, and the node
role ends waiting until slurmctld reports the node responding, so neither run needs the other's end. Each names the
systemd units that must run on its hosts: one that is not (slurmctld killed) is drift, and the next
`up` starts it again. It runs after every SU is provisioned, beside the Kubernetes step (site.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from clusterforge.pulumi.providers.host_provision import HostProvision, HostProvisionArgs
from clusterforge.pulumi.providers.munge_key import MungeKey, MungeKeyArgs

__all__ = ["Slurm", "SlurmArgs", "CONTROLLER_GROUP", "NODE_GROUP", "CONTROLLER_UNITS", "NODE_UNITS"]

CONTROLLER_GROUP = "slurm_controller"  # inventory groups (render.ansible_inventory)
NODE_GROUP = "slurm_nodes"
# the roles' units (roles/slurm_controller/vars, roles/slurm_node/vars); one not running is drift
CONTROLLER_UNITS = ("munge", "mariadb", "slurmdbd", "slurmctld", "cf-slurm-exporter")
NODE_UNITS = ("munge", "slurmd")


@dataclass(frozen=True)
class SlurmArgs:
    cluster: str
    controller: HostProvisionArgs
    nodes: HostProvisionArgs


class Slurm(pulumi.ComponentResource):
    """clusterforge:slurm:Slurm — outputs `controller_runs`, `node_runs`."""

    def __init__(self, name: str, args: SlurmArgs, opts: pulumi.ResourceOptions | None = None,
                 ssh_config: pulumi.Input[str] | None = None, after: Sequence[pulumi.Resource] = ()) -> None:
        super().__init__("clusterforge:slurm:Slurm", name, None, opts)
        self.munge_key = MungeKey(f"{name}-munge-key", MungeKeyArgs(args.cluster), pulumi.ResourceOptions(parent=self))
        secret = self.munge_key.key.apply(lambda key: {"cf_slurm_munge_key": key})
        controller, nodes = args.controller, args.nodes
        if ssh_config is not None:
            controller = dataclasses.replace(controller, ssh_config=ssh_config)
            nodes = dataclasses.replace(nodes, ssh_config=ssh_config)
        self.controller = HostProvision(
            f"{name}-controller", dataclasses.replace(controller, secret_vars=secret),
            pulumi.ResourceOptions(parent=self, depends_on=[*after, self.munge_key]))
        self.nodes = HostProvision(
            f"{name}-nodes", dataclasses.replace(nodes, secret_vars=secret),
            pulumi.ResourceOptions(parent=self, depends_on=[*after, self.munge_key]))
        self.register_outputs({"controller_runs": self.controller.runs, "node_runs": self.nodes.runs})
