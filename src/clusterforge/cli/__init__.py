"""The command line: one module per command group, one shared loader (`_common.load`).

``clusterforge = clusterforge.cli:main`` (pyproject.toml); ``python -m clusterforge.cli`` runs the same.
``clusterforge.cli.app`` is the typer app, imported on first use, so `--version` imports no command.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from clusterforge.cli.launch import main

__all__ = ["app", "main"]


class _Package(types.ModuleType):
    @property
    def app(self) -> Any:
        """The typer app of clusterforge.cli.app (the name the package has always exported)."""
        from clusterforge.cli.app import app

        return app

    @app.setter
    def app(self, _module: Any) -> None:
        # importing the submodule clusterforge.cli.app binds it here; the name keeps meaning the typer app
        pass


sys.modules[__name__].__class__ = _Package
