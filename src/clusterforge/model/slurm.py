"""Which schedulers a cluster runs, and how Slurm is set up when it is one of them.

``schedulers`` (ClusterSpec) lists kubernetes, slurm or both; the default is Kubernetes alone, as every
declaration was before Slurm (its step runs where control nodes are declared). ``slurm:`` shapes the
rendered Slurm files (render/slurm/): the cluster's name in Slurm's accounting, the partitions (one per
SU unless declared), how GPUs are described to slurmd, and whether the nodes' hardware is real or
simulated (the lab). The Slurm version is a software pin (``software.slurm_version``).
"""

from typing import Literal

from pydantic import Field

from clusterforge.model.base import Declared
from clusterforge.model.grammar import Name, SlurmName, SlurmTime
from clusterforge.model.numbers import Integer

__all__ = ["Slurm", "SlurmPartition", "SCHEDULERS", "SchedulerName"]

SCHEDULERS = ("kubernetes", "slurm")
SchedulerName = Literal["kubernetes", "slurm"]


class SlurmPartition(Declared):
    """One partition: the nodes of the listed SUs and the listed nodes (every GPU server when both are
    empty). ``default`` marks the partition jobs land in without ``-p``; ``max_time`` is its wall-clock
    limit in Slurm's time format."""

    name: SlurmName
    sus: list[Integer] = Field(default=[], max_length=4096)
    nodes: list[Name] = Field(default=[], max_length=100_000)
    default: bool = False
    max_time: SlurmTime = "INFINITE"
    default_time: SlurmTime | None = None


class Slurm(Declared):
    """``gpu_detection``: ``files`` writes one ``File=/dev/nvidiaN`` per GPU into gres.conf; ``nvml`` writes
    ``AutoDetect=nvml``, for a Slurm built with the NVML plugin (Debian 12's slurm-wlm 22.05 is not: it
    ships gpu_generic only). ``hardware: simulated`` is for the lab, whose hosts are containers without
    GPUs on a small machine: each GPU is a placeholder file slurmd counts (Slurm 22.05 has no count-only
    GPUs) and each node is given one core and 512 MB so a real slurmd on any machine meets its node line
    (the catalog's figures stay in a comment beside it).
    ``real_memory_pct`` is the share of a node's installed memory given to Slurm (RealMemory); the rest
    covers what firmware and the kernel keep and the OS's own use, so a node never reports less than its
    line and is drained for it."""

    cluster_name: SlurmName | None = None  # default: the cluster's name
    partitions: list[SlurmPartition] = Field(default=[], max_length=256)
    gpu_detection: Literal["files", "nvml"] = "files"
    hardware: Literal["real", "simulated"] = "real"
    real_memory_pct: Integer = Field(default=95, ge=50, le=100)
