"""How the cluster's Pulumi state is split into stacks (clusterforge.plan.stacks does the split).

``split: none`` (the default): one stack holds the whole cluster, one lock for every run. ``split: su``: a
site stack (networks, the lab, the site racks, fabric-wide files, storage), one stack per scalable unit (its
racks, provisioning and host checks) and, where the cluster runs schedulers or monitoring, a services stack
(Kubernetes, Slurm, monitoring). The SU stacks take no lock in common, so they apply side by side; each
reads what it needs of the site stack's outputs through the same backend. A new SU is a new stack.
"""

from typing import Literal

from clusterforge.model.base import Declared

__all__ = ["SPLITS", "State", "StateSplit"]

StateSplit = Literal["none", "su"]
SPLITS: tuple[str, ...] = ("none", "su")


class State(Declared):
    split: StateSplit = "none"
