"""Shared inputs for the device and link planners: the spec plus everything derived once."""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.model import ClusterSpec
from clusterforge.plan.fabric_dims import DataDims, StorageDims
from clusterforge.plan.facility import RackBudget
from clusterforge.plan.ipam import Pools

__all__ = ["Context"]


@dataclass(frozen=True)
class Context:
    spec: ClusterSpec
    data: DataDims
    storage: StorageDims
    pools: Pools
    budget: RackBudget

    @property
    def site(self) -> str:
        return self.spec.site.name

    def su_index(self, su: int) -> int:
        for index, unit in enumerate(self.spec.scalable_units):
            if unit.id == su:
                return index
        raise KeyError(su)
