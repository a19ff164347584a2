"""The golden cases: which inventory, which switches, rendered how. Shared by the tests and
scripts/regen-goldens.py so both always agree on what a golden file is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from clusterforge.model import ClusterSpec, load_cluster
from clusterforge.plan import Plan, plan_cluster
from clusterforge.render.switches import FABRIC_DIR, render_switches

REPO = Path(__file__).resolve().parents[2]
GOLDEN_DIR = Path(__file__).resolve().parent / "golden"


def with_nos(spec: ClusterSpec, nos: str, planes: tuple[str, ...]) -> ClusterSpec:
    """The same cluster with some planes on another NOS (port names follow from the Plan)."""
    networks = spec.networks.model_copy(update={
        name: spec.networks.plane(name).model_copy(update={"nos": nos}) for name in planes})
    return spec.model_copy(update={"networks": networks})


@dataclass(frozen=True)
class GoldenCase:
    inventory: str
    switches: tuple[str, ...] | None = None  # None: every switch
    transform: Callable[[ClusterSpec], ClusterSpec] | None = None

    def spec_and_plan(self) -> tuple[ClusterSpec, Plan]:
        spec, _ = load_cluster(REPO / self.inventory)
        if self.transform is not None:
            spec = self.transform(spec)
        return spec, plan_cluster(spec)


CASES: dict[str, GoldenCase] = {
    # every switch of the lab: SONiC RoCE data, SONiC storage, Cumulus management and oob
    "lab": GoldenCase("inventory/lab.yaml"),
    # the lab on Arista EOS, every plane: routed RoCE leaves/spines and L2 access switches
    "lab-eos": GoldenCase("inventory/lab.yaml",
                          transform=lambda spec: with_nos(spec, "eos", ("data", "storage", "management", "oob"))),
    # the lab's data plane on Cumulus: NVUE `qos roce` with the intent written out
    "lab-cumulus-roce": GoldenCase("inventory/lab.yaml", ("su01-leaf-rail0", "spine-01"),
                                   transform=lambda spec: with_nos(spec, "cumulus", ("data",))),
    # 128 GPUs: one of each role (data leaf/spine SONiC, storage leaf/spine Cumulus, mgmt ToR/agg)
    "roce-128gpu": GoldenCase("inventory/roce-128gpu.yaml", (
        "su01-leaf-rail0", "spine-01", "su01-stor-leaf-1", "stor-spine-01", "su01-r01-mgmt", "mgmt-agg-1",
        "su01-r01-oob")),
    # 128 GPUs on EOS, every Ethernet plane: VARP on the storage pair, VRRP on the management aggregation pair
    "roce-128gpu-eos": GoldenCase("inventory/roce-128gpu.yaml", (
        "su01-stor-leaf-1", "stor-spine-01", "mgmt-agg-1", "mgmt-agg-2", "su01-r01-mgmt", "oob-agg-2"),
        transform=lambda spec: with_nos(spec, "eos", ("data", "storage", "management", "oob"))),
    # InfiniBand data plane: one leaf, one spine, the subnet manager partitions; SONiC storage leaf
    "superpod-4su": GoldenCase("inventory/superpod-4su.yaml", (
        "su01-leaf-rail0", "spine-01", "su01-stor-leaf-1", FABRIC_DIR)),
}


@cache
def rendered(case_name: str) -> dict[str, str]:
    """Relative path under the case's golden directory -> content."""
    case = CASES[case_name]
    spec, plan = case.spec_and_plan()
    files = render_switches(plan)
    if case.switches is None:
        return files
    wanted = set(case.switches)
    return {path: text for path, text in files.items() if path.split("/")[1] in wanted}


def golden_files(case_name: str) -> dict[str, str]:
    root = GOLDEN_DIR / case_name
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}
