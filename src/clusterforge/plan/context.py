"""Shared inputs for the device and link planners: the spec plus everything derived once."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

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
        """Position of SU `su` in the declaration's list (for error locations)."""
        return self._su_indexes[su]

    @cached_property
    def memo(self) -> dict:
        """Values the planners derive from the spec once per key and ask for once per port (port names,
        plane attributes, link speeds): a 512-SU plan asks over a million times."""
        return {}

    @cached_property
    def _su_indexes(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for index, unit in enumerate(self.spec.scalable_units):
            out.setdefault(unit.id, index)
        return out
