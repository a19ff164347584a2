"""Pinned software versions for hosts."""

from typing import Literal

from pydantic import Field, field_validator

from clusterforge.model.base import Declared
from clusterforge.model.grammar import DriverBranch, DriverVersion, Name, OsRelease, Version
from clusterforge.model.numbers import Integer

__all__ = ["Software", "Team", "RESERVED_NAMESPACES"]

# Each team is a Kubernetes namespace with a GPU quota (roles/k8s_gpu): never one Kubernetes owns ("default",
# and "kube-" is reserved for its system namespaces: kube-system, kube-public, kube-node-lease) nor one the GPU
# or monitoring stacks deploy to, where a quota would starve their pods: the GPU Operator's
# (k8s_gpu_gpu_operator_namespace; nvidia-gpu-operator is the name NVIDIA's OpenShift install uses), the DCGM
# exporter's (dcgm_exporter_namespace), and the usual homes of a Prometheus stack and of Kueue, the queueing
# layer over team quotas (monitoring, kueue-system). tests/unit/test_silent_accepts.py keeps every
# *_namespace default of roles/ in this list.
RESERVED_NAMESPACES = ("default", "gpu-operator", "nvidia-gpu-operator", "gpu-monitoring", "monitoring",
                       "kueue-system")
RESERVED_NAMESPACE_PREFIX = "kube-"


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
    gpus: Integer = Field(ge=0, le=10_000_000)
    # Kubernetes queueing (Kueue, plan/queueing.py): `gpus` is the team's nominal quota in the cohort of all
    # teams. borrowing_limit_gpus: the most GPUs beyond it the team may borrow while others leave theirs idle
    # (unset: every GPU the cohort can lend it); lending_limit_gpus: the most of its own idle GPUs other teams
    # may borrow (unset: all of them). The plan writes the resolved numbers.
    borrowing_limit_gpus: Integer | None = Field(default=None, ge=0, le=10_000_000)
    lending_limit_gpus: Integer | None = Field(default=None, ge=0, le=10_000_000)

    @field_validator("name")
    @classmethod
    def _not_a_system_namespace(cls, name: str) -> str:
        if name in RESERVED_NAMESPACES or name.startswith(RESERVED_NAMESPACE_PREFIX):
            raise ValueError(f"{name!r} is a namespace Kubernetes, the GPU stack or the monitoring stack owns; a team"
                             f" is a namespace of its own: not {', '.join(RESERVED_NAMESPACES)} or a"
                             f" {RESERVED_NAMESPACE_PREFIX}* name")
        return name
