"""Exports of the Plan into other tools' formats: containerlab topologies and Batfish snapshots."""

from clusterforge.export.batfish import BatfishSnapshot, export_batfish
from clusterforge.export.containerlab import ContainerlabExport, ExportError, export_containerlab

__all__ = ["BatfishSnapshot", "ContainerlabExport", "ExportError", "export_batfish", "export_containerlab"]
