"""The stack's Slurm step from the Plan and the rendered tree: which hosts, which files, which extra vars.

The controller runs on the first control node (group `slurm_controller`), slurmd on every GPU server
(`slurm_nodes`); both read the rendered tree's `slurm/` files, written beside the Ansible inventory under
the stack's rendered directory. A change of those files re-runs both steps (their `host_vars_hash`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi

from clusterforge import paths
from clusterforge.plan import Plan
from clusterforge.pulumi._hashing import files_hash, tree_hash
from clusterforge.pulumi.providers.host_provision import HostProvisionArgs
from clusterforge.pulumi.settings import StackSettings
from clusterforge.pulumi.slurm.component import (CONTROLLER_GROUP, CONTROLLER_UNITS, NODE_GROUP, NODE_UNITS,
                                                 SlurmArgs)
from clusterforge.render.ansible_inventory import ANSIBLE_DIR
from clusterforge.render.tree import RenderedTree
from clusterforge.vocab import DeviceKind

__all__ = ["slurm_args", "slurm_extravars", "slurm_files", "write_slurm_files", "LAB_CONF_EXTRA", "SLURM_PLAYBOOK",
           "SLURM_DIR"]

SLURM_PLAYBOOK = "slurm.yml"
SLURM_DIR = "slurm"  # the rendered tree's directory of Slurm files
# The lab's lines after the rendered slurm.conf: a container sees this machine's cores and memory, not the
# planned server's, so Slurm takes the node's resources from slurm.conf instead of draining it as smaller.
LAB_CONF_EXTRA = ("SlurmdParameters=config_overrides",)


def slurm_files(tree: RenderedTree) -> dict[str, str]:
    """The rendered tree's slurm/ files by name (slurm.conf, gres.conf, topology.conf, ...)."""
    prefix = f"{SLURM_DIR}/"
    return {path.removeprefix(prefix): text for path, text in tree.files().items() if path.startswith(prefix)}


def write_slurm_files(tree: RenderedTree, settings: StackSettings) -> None:
    """The Slurm files the playbook copies, under the stack's rendered directory. Real runs only."""
    from clusterforge.render import write_tree

    write_tree(settings.rendered_dir / SLURM_DIR, slurm_files(tree))


def slurm_extravars(conf_dir: Path, lab: bool) -> dict[str, Any]:
    return {"cf_slurm_conf_dir": str(conf_dir), "cf_slurm_lab_conf_extra": list(LAB_CONF_EXTRA) if lab else []}


def slurm_args(plan: Plan, tree: RenderedTree, settings: StackSettings, roles_hash: str | None,
               wanted: bool) -> SlurmArgs | None:
    """The controller and node steps, when the declaration asks for Slurm, a control node is declared and the
    site playbook provisions (a custom `playbook` setting replaces provisioning as a whole)."""
    controls = [d.name for d in plan.devices if d.kind == DeviceKind.CONTROL]
    nodes = tuple(d.name for d in plan.devices if d.kind == DeviceKind.SERVER and d.gpus)
    if not wanted or not controls or not nodes or not settings.provision or settings.playbook or roles_hash is None:
        return None
    files = slurm_files(tree)
    if "slurm.conf" not in files:
        pulumi.log.warn("the Slurm step is skipped: the rendered tree has no slurm/slurm.conf")
        return None
    playbook = paths.playbooks_dir() / SLURM_PLAYBOOK
    lab = settings.target == "lab"
    extravars = {"cf_lab": lab, **slurm_extravars(settings.rendered_dir / SLURM_DIR, lab)}
    inventory = str(settings.rendered_dir / "ansible" / "inventory.yml")
    ssh_config = str(settings.host_ssh_config) if settings.host_ssh_config else None

    def step(group: str, hosts: tuple[str, ...], units: tuple[str, ...]) -> HostProvisionArgs:
        host_vars = {f"{ANSIBLE_DIR}/host_vars/{h}.yml": tree.host_vars(h) for h in hosts}
        host_vars.update({f"{SLURM_DIR}/{name}": text for name, text in files.items()})
        return HostProvisionArgs(
            group=group, hosts=hosts, inventory_path=inventory,
            private_data_dir=str(settings.work_dir / "provision" / group), roles_hash=roles_hash,
            host_vars_hash=files_hash(host_vars), playbook=str(playbook),
            playbook_hash=tree_hash([playbook], playbook.parent), tags=None, extravars=extravars,
            ssh_config=ssh_config, services=units,
        )  # fmt: skip

    return SlurmArgs(cluster=plan.cluster, controller=step(CONTROLLER_GROUP, (controls[0],), CONTROLLER_UNITS),
                     nodes=step(NODE_GROUP, nodes, NODE_UNITS))
