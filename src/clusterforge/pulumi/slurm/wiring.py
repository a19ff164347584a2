"""The stack's Slurm step from the Plan and the rendered tree: which hosts, which files, which extra vars.

The controller runs on the first control node (group `slurm_controller`), slurmd on every GPU server
(`slurm_nodes`); both read the rendered tree's `slurm/` files (`tree.slurm_files()`), written beside the
Ansible inventory under the stack's rendered directory, where `cf_slurm.config_dir` points. A change of
those files re-runs both steps (their `host_vars_hash`).
"""

from __future__ import annotations

from typing import Any

from clusterforge import paths
from clusterforge.plan import Plan
from clusterforge.pulumi._hashing import files_hash, tree_hash
from clusterforge.pulumi.providers.host_provision import HostProvisionArgs
from clusterforge.pulumi.settings import StackSettings
from clusterforge.pulumi.slurm.component import CONTROLLER_GROUP, CONTROLLER_UNITS, NODE_GROUP, NODE_UNITS, SlurmArgs
from clusterforge.render.ansible_inventory import ANSIBLE_DIR
from clusterforge.render.tree import RenderedTree

__all__ = ["slurm_args", "slurm_extravars", "slurm_files", "LAB_CONF_EXTRA", "SLURM_PLAYBOOK"]

SLURM_PLAYBOOK = "slurm.yml"
# The lab's lines after the rendered slurm.conf (Slurm uses a key's last value): a systemd-nspawn host on this
# machine's cgroup v1 hierarchy sees its controllers read-only, and slurmd's proctrack/cgroup stops there
# ("unable to create slurm freezer xcgroup: Read-only file system", seen on the lab), so the lab tracks
# job processes through /proc and binds tasks by affinity alone: jobs are not confined (real hosts are).
LAB_CONF_EXTRA = ("ProctrackType=proctrack/linuxproc", "TaskPlugin=task/affinity",
                  "JobAcctGatherType=jobacct_gather/linux")


def slurm_files(tree: RenderedTree) -> dict[str, str]:
    """The rendered tree's slurm/ files by their path in the tree (slurm/slurm.conf, slurm/nccl/<host>.conf)."""
    return tree.slurm_files()


def slurm_extravars(lab: bool) -> dict[str, Any]:
    return {"cf_lab": lab, "cf_slurm_conf_extra": list(LAB_CONF_EXTRA) if lab else []}


def slurm_args(plan: Plan, tree: RenderedTree, settings: StackSettings, roles_hash: str | None) -> SlurmArgs | None:
    """The controller and node steps, when the declaration asks for Slurm (the plan has a SlurmPlan, whose
    controllers are the control nodes) and the site playbook provisions (a custom `playbook` setting
    replaces provisioning as a whole)."""
    slurm = plan.slurm
    if slurm is None or not slurm.controllers or not slurm.nodes:
        return None
    if not settings.provision or settings.playbook or roles_hash is None:
        return None
    files = slurm_files(tree)
    playbook = paths.playbooks_dir() / SLURM_PLAYBOOK
    extravars = slurm_extravars(settings.target.emulates)
    inventory = str(settings.rendered_dir / "ansible" / "inventory.yml")
    ssh_config = str(settings.host_ssh_config) if settings.host_ssh_config else None

    def step(group: str, hosts: tuple[str, ...], units: tuple[str, ...]) -> HostProvisionArgs:
        host_vars = {f"{ANSIBLE_DIR}/host_vars/{h}.yml": tree.host_vars(h) for h in hosts}
        host_vars.update(files)
        return HostProvisionArgs(
            group=group, hosts=hosts, inventory_path=inventory,
            private_data_dir=str(settings.work_dir / "provision" / group), roles_hash=roles_hash,
            host_vars_hash=files_hash(host_vars), playbook=str(playbook),
            playbook_hash=tree_hash([playbook], playbook.parent), tags=None, extravars=extravars,
            ssh_config=ssh_config, services=units,
        )  # fmt: skip

    controller = (slurm.controllers[0].name,)  # slurmctld and slurmdbd (playbooks/slurm.yml)
    return SlurmArgs(cluster=plan.cluster, controller=step(CONTROLLER_GROUP, controller, CONTROLLER_UNITS),
                     nodes=step(NODE_GROUP, tuple(n.name for n in slurm.nodes), NODE_UNITS))
