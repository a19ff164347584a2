"""Kubernetes nodes drained through the Eviction API and uncordoned after their health gate
(clusterforge.ops.drain): PodDisruptionBudgets honoured, a blocked eviction named and never forced."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterforge.ops.drain import DrainBlocked, drain, uncordon
from clusterforge.schedulers.driver import Drained, DrainRefused, Say

__all__ = ["KubeControl"]

NAME = "kubernetes"


@dataclass(frozen=True)
class KubeControl:
    core: Any  # a kubernetes.client.CoreV1Api
    nodes: frozenset[str]  # the servers, each a node of the cluster
    scheduler: str = NAME

    def manages(self, node: str) -> bool:
        return node in self.nodes

    def drain(self, node: str, reason: str, timeout_s: float, say: Say) -> Drained:
        try:
            drained = drain(self.core, node, timeout_s, say=say)
        except DrainBlocked as exc:
            raise DrainRefused(NAME, node, str(exc), "the node stays cordoned") from None
        return Drained(NAME, node, f"{len(drained.evicted)} pod(s) evicted, {len(drained.skipped)} DaemonSet pod(s)"
                                   " left")

    def rejoin(self, node: str, rendered: Path, private: Path, say: Say) -> str | None:
        return None  # the site playbook has put back what a node of this cluster needs

    def resume(self, node: str) -> str:
        uncordon(self.core, node)
        return "uncordoned"
