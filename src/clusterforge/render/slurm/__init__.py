"""The Slurm files of a plan with Slurm among its schedulers (keys of ``RenderedTree.slurm``, written under
``slurm/``): slurm.conf, gres.conf, topology.conf (when the plan has a topology), cgroup.conf,
accounts.json and nccl/<host>.conf per GPU server. Nothing for a plan without Slurm."""

from __future__ import annotations

from clusterforge.plan import Plan
from clusterforge.render.slurm.accounts import accounts_json
from clusterforge.render.slurm.nccl_conf import nccl_conf
from clusterforge.render.slurm.node_files import cgroup_conf, gres_conf
from clusterforge.render.slurm.slurm_conf import slurm_conf
from clusterforge.render.slurm.topology_conf import topology_conf

__all__ = ["slurm_files", "SLURM_DIR", "CONFIG_FILES", "NCCL_DIR", "ACCOUNTS_FILE"]

SLURM_DIR = "slurm"
NCCL_DIR = "nccl"
ACCOUNTS_FILE = "accounts.json"
CONFIG_FILES = ("slurm.conf", "gres.conf", "topology.conf", "cgroup.conf")  # installed into /etc/slurm/


def slurm_files(plan: Plan) -> dict[str, str]:
    slurm = plan.slurm
    if slurm is None:
        return {}
    files = {"slurm.conf": slurm_conf(plan.cluster, slurm), "gres.conf": gres_conf(plan.cluster, slurm)}
    if slurm.topology_plugin and plan.scheduler is not None:
        files["topology.conf"] = topology_conf(plan.cluster, slurm, plan.scheduler)
    files["cgroup.conf"] = cgroup_conf(plan.cluster, slurm.simulated)
    files[ACCOUNTS_FILE] = accounts_json(slurm)
    files.update({f"{NCCL_DIR}/{host.host}.conf": nccl_conf(plan.cluster, host) for host in slurm.nccl})
    return files
