"""The command line: one module per command group, one shared loader (`_common.load`).

``clusterforge = clusterforge.cli:main`` (pyproject.toml); ``python -m clusterforge.cli`` runs the same.
"""

from clusterforge.cli.app import app, main

__all__ = ["app", "main"]
