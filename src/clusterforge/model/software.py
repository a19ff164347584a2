"""Pinned software versions for hosts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from clusterforge.model.base import Declared

__all__ = ["Software", "Team"]


class Software(Declared):
    os: str = "debian-12"
    nvidia_driver_branch: str = "535"
    nvidia_driver_version: str = "535.261.03"
    nvidia_driver_source: Literal["ubuntu-server", "cuda-repo", "debian-nonfree", "mirror"] = "debian-nonfree"
    nvidia_kernel_module: Literal["open", "proprietary", "skip"] = "proprietary"
    cuda_version: str = "11.8"
    kubernetes_version: str = "1.31"
    nccl_version: str = "2.21"


class Team(Declared):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    gpus: int = Field(ge=0)
