"""The declaration schema (pydantic v2, frozen) and YAML loading with line numbers."""

from clusterforge.model.catalog import Catalog, PduModel, ServerModel, SwitchModel
from clusterforge.model.cluster import ClusterSpec, Loc
from clusterforge.model.errors import DeclarationError, Problem
from clusterforge.model.loader import SourceMap, load_cluster
from clusterforge.model.network import PLANES, Networks, Plane
from clusterforge.model.units import ScalableUnit

__all__ = [
    "Catalog", "ClusterSpec", "DeclarationError", "Loc", "Networks", "PLANES", "PduModel", "Plane",
    "Problem", "ScalableUnit", "ServerModel", "SourceMap", "SwitchModel", "load_cluster",
]
