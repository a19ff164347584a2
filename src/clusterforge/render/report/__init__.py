"""Reports people look at: rack elevations, fabric diagrams, power, IP plan, BOM and TCO as HTML/SVG/CSV."""

from clusterforge.render.report.html import render_report
from clusterforge.render.report.tco import tco

__all__ = ["render_report", "tco"]
