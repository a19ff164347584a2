"""Example Plans with their rendered switch configs, once per session: the inventories, and the lab
with every plane on Arista EOS (so each NOS mapping is exercised)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from clusterforge.loading import load_and_plan
from clusterforge.model import load_cluster
from clusterforge.plan import plan_cluster
from clusterforge.render.switches import render_switches

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ("lab", "roce-128gpu", "superpod-4su", "lab-eos")


@cache
def example(name: str):
    """(plan, rendered switch files) of an example."""
    if name == "lab-eos":
        spec, _ = load_cluster(REPO / "inventory" / "lab.yaml")
        networks = spec.networks.model_copy(update={
            plane: spec.networks.plane(plane).model_copy(update={"nos": "eos"})
            for plane in ("data", "storage", "management", "oob")})
        spec = spec.model_copy(update={"networks": networks})
        plan = plan_cluster(spec)
    else:
        spec, plan, _ = load_and_plan(REPO / "inventory" / f"{name}.yaml")
    return plan, render_switches(plan)
