"""The renderers `clusterforge render` runs, in order. Each returns {relative path: content}."""

from __future__ import annotations

from collections.abc import Callable

from clusterforge.plan import Plan
from clusterforge.render.ansible_inventory import render_ansible
from clusterforge.render.assets import render_assets
from clusterforge.render.switches import render_switches

__all__ = ["RENDERERS", "render_all"]

Renderer = Callable[[Plan], dict[str, str]]

RENDERERS: list[tuple[str, Renderer]] = [
    ("ansible", render_ansible),
    ("assets", render_assets),
    ("switches", render_switches),
]


def render_all(plan: Plan) -> dict[str, str]:
    files: dict[str, str] = {}
    for _, renderer in RENDERERS:
        files.update(renderer(plan))
    return files
