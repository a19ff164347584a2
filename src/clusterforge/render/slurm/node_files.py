"""The node-side Slurm files: gres.conf (how slurmd finds each node's GPUs) and cgroup.conf (what a job
is confined to).

gres.conf, by ``slurm.gpu_detection`` and ``slurm.hardware``:

* files (real hosts): ``NodeName=<nodes> Name=gpu Type=<type> File=/dev/nvidia[0-N]``, one line per
  run of nodes with the same GPUs, so the device cgroup can confine a job to the GPUs it was given;
* nvml: ``AutoDetect=nvml`` (slurmd asks NVML; Slurm must be built with the NVML plugin);
* simulated (the lab): ``Count=N`` with no device files, said so in the file.

cgroup.conf: cores, memory, swap and devices constrained (ConstrainDevices gives a job only its GPUs'
/dev/nvidia* files); ``CgroupPlugin=autodetect`` takes cgroup v2 where the host runs it.
"""

from __future__ import annotations

from itertools import groupby

from clusterforge.plan.slurm import SlurmPlan
from clusterforge.render.scheduler import hostlist

__all__ = ["gres_conf", "cgroup_conf"]


def gres_conf(cluster: str, slurm: SlurmPlan) -> str:
    lines = [f"# {cluster}: gres.conf rendered by clusterforge from the plan. Install beside slurm.conf."]
    gpu_nodes = [n for n in slurm.nodes if n.gpus]
    if slurm.gpu_detection == "nvml":
        lines.append("# GPUs detected by slurmd through NVML (needs Slurm's gpu/nvml plugin)")
        lines.append("AutoDetect=nvml")
        return "\n".join(lines) + "\n"
    if slurm.simulated:
        lines.append("# SIMULATED GPUs (the lab): the hosts have no /dev/nvidia* devices, so each GPU is a"
                     " count-only GRES; no device confinement happens")
    for (gpu_type, gpus), run in groupby(gpu_nodes, key=lambda n: (n.gpu_type, n.gpus)):
        names = hostlist(n.name for n in run)
        if slurm.simulated:
            lines.append(f"NodeName={names} Name=gpu Type={gpu_type} Count={gpus}")
        else:
            files = "/dev/nvidia0" if gpus == 1 else f"/dev/nvidia[0-{gpus - 1}]"
            lines.append(f"NodeName={names} Name=gpu Type={gpu_type} File={files}")
    return "\n".join(lines) + "\n"


def cgroup_conf(cluster: str) -> str:
    lines = [f"# {cluster}: cgroup.conf rendered by clusterforge. Install beside slurm.conf on every node.",
             "CgroupPlugin=autodetect",
             "ConstrainCores=yes",
             "ConstrainDevices=yes",
             "ConstrainRAMSpace=yes",
             "ConstrainSwapSpace=yes"]
    return "\n".join(lines) + "\n"
