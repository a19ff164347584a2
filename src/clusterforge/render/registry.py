"""What `clusterforge render` writes: the rendered tree's flat view (render.tree)."""

from __future__ import annotations

from clusterforge.plan import Plan
from clusterforge.render.tree import render_tree

__all__ = ["render_all"]


def render_all(plan: Plan, workers: int | None = None) -> dict[str, str]:
    """Every file `clusterforge render` writes, by path under the output directory."""
    return render_tree(plan, workers).files()
