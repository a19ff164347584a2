"""Pinned software versions for hosts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from clusterforge.model.base import Declared
from clusterforge.model.grammar import DriverBranch, DriverVersion, Name, OsRelease, Version

__all__ = ["Software", "Team"]


class Software(Declared):
    os: OsRelease = "debian-12"
    nvidia_driver_branch: DriverBranch = "535"
    nvidia_driver_version: DriverVersion = "535.261.03"
    nvidia_driver_source: Literal["ubuntu-server", "cuda-repo", "debian-nonfree", "mirror"] = "debian-nonfree"
    nvidia_kernel_module: Literal["open", "proprietary", "skip"] = "proprietary"
    cuda_version: Version = "11.8"
    kubernetes_version: Version = "1.31"
    nccl_version: Version = "2.21"
    slurm_version: Version = "22.05"  # Debian 12's slurm-wlm; selects what the rendered Slurm files may use


class Team(Declared):
    name: Name
    gpus: int = Field(ge=0, le=10_000_000)
