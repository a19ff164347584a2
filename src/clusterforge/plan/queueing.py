"""Kubernetes job queueing from the plan: what Kueue admits GPU jobs by.

* Flavors: one ResourceFlavor per GPU model, selecting that model's nodes by the ``clusterforge.io/gpu-model``
  label (roles/k8s_gpu sets it) and adding the GPU taint's toleration to the pods it admits.
* Topology: one Kueue Topology, levels coarse to fine from the plan's node labels (plan/topology.py): the SU,
  the leaf group (the nodes sharing the same rail leaves), the NVLink domain on rack-scale systems or else the
  rack, then the host (``kubernetes.io/hostname``, which the kubelet sets). The levels follow from the kind of
  system, never from how many SUs or racks exist today: Kueue refuses any change to a Topology's levels.
  A level some GPU node lacks the label of is left out.
* Queues: one ClusterQueue per team (its name), nominal quota the team's declared GPUs; a LocalQueue of the
  same name in the team's namespace; every ClusterQueue in one Cohort (the cluster's name). GPUs no team is
  given are the Cohort's own quota, which every team may borrow. With several GPU models a team's GPUs are
  split over the flavors in proportion to the cluster's GPUs of each (largest remainder, flavor order on ties).
* Limits: lending defaults to all of a team's GPUs; borrowing to everything the cohort can lend it (the other
  teams' lending limits plus the Cohort's own GPUs); both are written out, never left implicit. A team's
  ResourceQuota (roles/k8s_gpu) stays the hard ceiling: its nominal quota plus its borrowing limit, since a
  pod Kueue admits on borrowed quota must also pass the namespace's quota.
* Planned (and rendered) wherever there are GPU nodes and teams; applied only where the declaration says
  ``kubernetes: {kueue: true}`` (``enabled``): playbooks/kubernetes.yml runs roles/k8s_kueue, k8s-nodes.yml sets
  the ceilings as the teams' ResourceQuotas, and `verify` expects them.
* Only ``nvidia.com/gpu`` is queued: CPU and memory are not what teams share by quota here, and Kueue is told
  to leave them out of its accounting (roles/k8s_kueue's configuration).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from clusterforge.plan.kubernetes import GPU_TAINT, KubeNode
from clusterforge.plan.topology import LABEL_PREFIX

__all__ = ["GPU_RESOURCE", "GPU_MODEL_LABEL", "HOSTNAME_LABEL", "Flavor", "FlavorQuota", "TeamQueue",
           "QueueingPlan", "TeamLimits", "plan_queueing", "flavor_name", "topology_levels", "split"]

GPU_RESOURCE = "nvidia.com/gpu"
GPU_MODEL_LABEL = "clusterforge.io/gpu-model"
HOSTNAME_LABEL = "kubernetes.io/hostname"
TOPOLOGY_NAME = "gpu-fabric"


@dataclass(frozen=True)
class Flavor:
    name: str
    gpu_model: str
    gpus: int  # the cluster's GPUs of this model
    node_labels: tuple[tuple[str, str], ...]
    tolerations: tuple[tuple[str, str, str], ...]  # (key, value, effect)
    topology: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "gpu_model": self.gpu_model, "gpus": self.gpus,
                "node_labels": dict(self.node_labels),
                "tolerations": [{"key": k, "value": v, "effect": e} for k, v, e in self.tolerations],
                "topology": self.topology}


@dataclass(frozen=True)
class FlavorQuota:
    flavor: str
    nominal_gpus: int
    borrowing_limit_gpus: int
    lending_limit_gpus: int

    def to_dict(self) -> dict[str, Any]:
        return {"flavor": self.flavor, "nominal_gpus": self.nominal_gpus,
                "borrowing_limit_gpus": self.borrowing_limit_gpus, "lending_limit_gpus": self.lending_limit_gpus}


@dataclass(frozen=True)
class TeamQueue:
    team: str  # also its namespace, its ClusterQueue and its LocalQueue
    quotas: tuple[FlavorQuota, ...]

    @property
    def nominal_gpus(self) -> int:
        return sum(q.nominal_gpus for q in self.quotas)

    @property
    def ceiling_gpus(self) -> int:
        """The most GPUs the team's pods hold at once: its ResourceQuota."""
        return sum(q.nominal_gpus + q.borrowing_limit_gpus for q in self.quotas)

    def to_dict(self) -> dict[str, Any]:
        return {"team": self.team, "namespace": self.team, "cluster_queue": self.team, "local_queue": self.team,
                "ceiling_gpus": self.ceiling_gpus, "quotas": [q.to_dict() for q in self.quotas]}


@dataclass(frozen=True)
class QueueingPlan:
    cohort: str
    cohort_gpus: tuple[tuple[str, int], ...]  # (flavor, GPUs no team is given): the Cohort's own quota
    topology: str
    levels: tuple[str, ...]  # node label keys, coarse to fine
    flavors: tuple[Flavor, ...]
    queues: tuple[TeamQueue, ...]
    enabled: bool = False  # the declaration's kubernetes.kueue: roles/k8s_kueue runs and the quotas are ceilings

    def to_dict(self) -> dict[str, Any]:
        return {"enabled": self.enabled, "cohort": self.cohort, "cohort_gpus": dict(self.cohort_gpus),
                "topology": self.topology,
                "levels": list(self.levels), "flavors": [f.to_dict() for f in self.flavors],
                "queues": [q.to_dict() for q in self.queues],
                # the teams' ResourceQuotas with Kueue on, in roles/k8s_gpu's team form
                "quota_ceilings": [{"name": q.team, "gpus": q.ceiling_gpus} for q in self.queues]}


def flavor_name(gpu_model: str) -> str:
    """A DNS label from a GPU model: H200-SXM5-141GB -> h200-sxm5-141gb."""
    name = re.sub(r"[^a-z0-9-]+", "-", gpu_model.lower()).strip("-")[:63].strip("-")
    return name or "gpu"


def topology_levels(nodes: Sequence[KubeNode]) -> tuple[str, ...]:
    labels = [dict(n.labels) for n in nodes]
    rack_scale = any(lab.get(LABEL_PREFIX + "nvlink-domain", n.name) != n.name
                     for lab, n in zip(labels, nodes, strict=True))
    wanted = ("su", "leaf-group", "nvlink-domain" if rack_scale else "rack")
    keys = [LABEL_PREFIX + k for k in wanted]
    return (*(k for k in keys if labels and all(k in lab for lab in labels)), HOSTNAME_LABEL)


def split(total: int, weights: Sequence[int]) -> list[int]:
    """`total` in proportion to `weights`, largest remainder first, earlier weights on ties; sums to `total`."""
    whole = sum(weights)
    if whole == 0:
        return [total] + [0] * (len(weights) - 1) if weights else []
    shares = [total * w // whole for w in weights]
    order = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % whole), i))
    for i in order[:total - sum(shares)]:
        shares[i] += 1
    return shares


@dataclass(frozen=True)
class TeamLimits:
    """What planning needs of a declared team (model.software.Team)."""

    name: str
    gpus: int
    borrowing_limit_gpus: int | None = None
    lending_limit_gpus: int | None = None


def plan_queueing(cluster: str, nodes: Iterable[KubeNode], teams: Iterable[TeamLimits],
                  enabled: bool = False) -> QueueingPlan | None:
    """None where there is nothing to queue: no GPU node or no team."""
    nodes, teams = list(nodes), list(teams)
    if not nodes or not teams:
        return None
    capacity: dict[str, int] = {}
    for node in nodes:
        capacity[node.gpu_model] = capacity.get(node.gpu_model, 0) + node.gpus
    key, value, effect = GPU_TAINT
    flavors = tuple(Flavor(flavor_name(model), model, gpus, ((GPU_MODEL_LABEL, model),), ((key, value, effect),),
                           TOPOLOGY_NAME) for model, gpus in sorted(capacity.items()))
    weights = [f.gpus for f in flavors]
    nominal = {t.name: split(t.gpus, weights) for t in teams}
    lending = {t.name: split(t.gpus if t.lending_limit_gpus is None else t.lending_limit_gpus, weights)
               for t in teams}
    pool = [max(f.gpus - sum(nominal[t.name][i] for t in teams), 0) for i, f in enumerate(flavors)]
    queues = []
    for team in teams:
        lendable = [pool[i] + sum(lending[o.name][i] for o in teams if o.name != team.name)
                    for i in range(len(flavors))]
        borrowing = lendable if team.borrowing_limit_gpus is None else split(team.borrowing_limit_gpus, weights)
        queues.append(TeamQueue(team.name, tuple(
            FlavorQuota(f.name, nominal[team.name][i], borrowing[i], lending[team.name][i])
            for i, f in enumerate(flavors))))
    return QueueingPlan(flavor_name(cluster), tuple((f.name, pool[i]) for i, f in enumerate(flavors)),
                        TOPOLOGY_NAME, topology_levels(nodes), flavors, tuple(queues), enabled)
