"""The node-side Slurm files: gres.conf (how slurmd finds each node's GPUs) and cgroup.conf (what a job
is confined to).

gres.conf, by ``slurm.gpu_detection`` and ``slurm.hardware``:

* files (real hosts): ``NodeName=<nodes> Name=gpu Type=<type> File=/dev/nvidia[0-N]``, one line per
  run of nodes with the same GPUs, so the device cgroup can confine a job to the GPUs it was given;
* nvml: ``AutoDetect=nvml`` (slurmd asks NVML; Slurm must be built with the NVML plugin);
* simulated (the lab): ``File=`` empty placeholder files under SIMULATED_GPU_DIR, said so in the file.
  A count-only GPU is not possible: Slurm drops every GPU without a File from a node's GRES ("Remove
  every GPU with an empty File", gres_g_node_config_load in src/common/gres.c at tag slurm-22-05-8-1) and
  slurmctld then drains the node ("gres/gpu count reported lower than configured"); slurmd counts a
  placeholder file, logging that it is not a character device (tests/slurm registers a real slurmd so).

cgroup.conf: cores, memory, swap and devices constrained (ConstrainDevices gives a job only its GPUs'
/dev/nvidia* files; simulated GPUs have no device to confine, so there it is off and says why);
``CgroupPlugin=autodetect`` takes cgroup v2 where the host runs it.
"""

from __future__ import annotations

from itertools import groupby

from clusterforge.plan.slurm import SlurmPlan
from clusterforge.render.scheduler import hostlist

__all__ = ["gres_conf", "cgroup_conf", "SIMULATED_GPU_DIR", "simulated_gpu_files"]

SIMULATED_GPU_DIR = "/var/lib/clusterforge/simulated-gpus"  # the slurm_node role creates the files


def simulated_gpu_files(gpus: int) -> list[str]:
    return [f"{SIMULATED_GPU_DIR}/nvidia{i}" for i in range(gpus)]


def _files(prefix: str, gpus: int) -> str:
    return f"{prefix}0" if gpus == 1 else f"{prefix}[0-{gpus - 1}]"


def gres_conf(cluster: str, slurm: SlurmPlan) -> str:
    lines = [f"# {cluster}: gres.conf rendered by clusterforge from the plan. Install beside slurm.conf."]
    gpu_nodes = [n for n in slurm.nodes if n.gpus]
    if slurm.gpu_detection == "nvml":
        lines.append("# GPUs detected by slurmd through NVML (needs Slurm's gpu/nvml plugin)")
        lines.append("AutoDetect=nvml")
        return "\n".join(lines) + "\n"
    if slurm.simulated:
        lines.append(f"# SIMULATED GPUs (the lab): the hosts have no /dev/nvidia*; each GPU is an empty placeholder"
                     f" file in {SIMULATED_GPU_DIR} (Slurm drops a GPU without File=), which slurmd counts and"
                     " logs as not a character device; nothing is confined")
    prefix = f"{SIMULATED_GPU_DIR}/nvidia" if slurm.simulated else "/dev/nvidia"
    for (gpu_type, gpus), run in groupby(gpu_nodes, key=lambda n: (n.gpu_type, n.gpus)):
        lines.append(f"NodeName={hostlist(n.name for n in run)} Name=gpu Type={gpu_type} File={_files(prefix, gpus)}")
    return "\n".join(lines) + "\n"


def cgroup_conf(cluster: str, simulated: bool = False) -> str:
    lines = [f"# {cluster}: cgroup.conf rendered by clusterforge. Install beside slurm.conf on every node.",
             "CgroupPlugin=autodetect",
             "ConstrainCores=yes"]
    if simulated:
        lines.append("# SIMULATED GPUs are placeholder files, not devices: there is nothing to confine")
    lines += [f"ConstrainDevices={'no' if simulated else 'yes'}",
              "ConstrainRAMSpace=yes",
              "ConstrainSwapSpace=yes"]
    return "\n".join(lines) + "\n"
