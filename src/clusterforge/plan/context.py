"""Shared inputs for the device and link planners: the spec plus everything derived once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from clusterforge.model import ClusterSpec
from clusterforge.nos import NOS_TRAITS, NosTraits, traits_for
from clusterforge.plan.fabric_dims import DataDims, StorageDims
from clusterforge.plan.facility import RackBudget
from clusterforge.plan.ipam import Pools
from clusterforge.plan.plane_models import PlaneModels, plane_models

__all__ = ["Context"]


@dataclass(frozen=True)
class Context:
    spec: ClusterSpec
    data: DataDims
    storage: StorageDims
    pools: Pools
    budget: RackBudget
    # what the planners know of each NOS (clusterforge.nos): data, never a NOS name compared
    nos_traits: Mapping[str, NosTraits] = field(default_factory=lambda: NOS_TRAITS)

    def models(self, plane: str) -> PlaneModels:
        """The plane's leaf, spine and core switch models (PlanError where leaf or spine is not declared)."""
        key = ("models", plane)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = plane_models(self.spec, plane)
        return found

    def traits(self, plane: str) -> NosTraits:
        """The NOS facts of a plane's declared NOS."""
        return traits_for(self.spec.networks.plane(plane).nos, self.nos_traits)

    @property
    def site(self) -> str:
        return self.spec.site.name

    def su_index(self, su: int) -> int:
        """Position of SU `su` in the declaration's list (for error locations)."""
        return self._su_indexes[su]

    @cached_property
    def memo(self) -> dict[Any, Any]:
        """Values the planners derive from the spec once per key and ask for once per port (port names,
        plane attributes, link speeds): a 512-SU plan asks over a million times."""
        return {}

    @cached_property
    def _su_indexes(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for index, unit in enumerate(self.spec.scalable_units):
            out.setdefault(unit.id, index)
        return out
