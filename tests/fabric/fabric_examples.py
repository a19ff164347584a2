"""The three example inventories planned and rendered once per test session."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from clusterforge.loading import load_and_plan
from clusterforge.render.switches import render_switches

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ("lab", "roce-128gpu", "superpod-4su")


@cache
def example(name: str):
    """(spec, plan, rendered switch files) of inventory/<name>.yaml."""
    spec, plan, _ = load_and_plan(REPO / "inventory" / f"{name}.yaml")
    return spec, plan, render_switches(plan)
