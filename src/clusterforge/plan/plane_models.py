"""The switch models a plane is built from, as names the planners can use: leaf, spine, core.

The declaration leaves each optional (model/network.py); a routed or access plane needs a leaf and a
spine model, and its core tier is the core model where declared, else the spine model.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.model import ClusterSpec
from clusterforge.plan.errors import PlanError

__all__ = ["PlaneModels", "plane_models"]


@dataclass(frozen=True, slots=True)
class PlaneModels:
    leaf: str  # leaves (data, storage), ToRs (management, oob)
    spine: str  # spines, aggregation switches
    core: str  # cores, access cores: core_model, else spine_model


def plane_models(spec: ClusterSpec, plane: str) -> PlaneModels:
    decl = spec.networks.plane(plane)
    if not decl.leaf_model or not decl.spine_model:
        raise PlanError([(("networks", plane), f"the {plane} plane needs leaf_model and spine_model")])
    return PlaneModels(decl.leaf_model, decl.spine_model, decl.core_model or decl.spine_model)
