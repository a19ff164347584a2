"""The do-not-edit line every rendered switch file starts with (a comment in the file's own syntax)."""

from __future__ import annotations

__all__ = ["HEADER_TEXT"]

HEADER_TEXT = "Rendered by clusterforge from the Plan. Do not edit: change the inventory declaration."
