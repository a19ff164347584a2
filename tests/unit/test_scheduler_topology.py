"""Scheduler topology from the plan: Slurm tree (leaf groups under spines, per-SU spines under cores),
Slurm block (one block per NVLink domain) and Kubernetes node labels, as record and as rendered files."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
import yaml

from clusterforge.loading import load_and_plan
from clusterforge.model.scale import scaled
from clusterforge.plan import plan_cluster
from clusterforge.render import render_tree
from clusterforge.render.scheduler import hostlist

REPO = Path(__file__).resolve().parents[2]


@cache
def planned(name: str):
    return load_and_plan(REPO / "inventory" / f"{name}.yaml")[:2]


def _expand(expr: str) -> list[str]:
    """Slurm hostlist back to names (the subset hostlist() writes: prefix[a-b,c] and plain names)."""
    out = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", expr):
        match = re.fullmatch(r"(.*)\[(.*)\]", part)
        if not match:
            out.append(part)
            continue
        for span in match[2].split(","):
            a, _, b = span.partition("-")
            width = len(a)
            out += [f"{match[1]}{n:0{width}d}" for n in range(int(a), int(b or a) + 1)]
    return out


def test_hostlist_round_trips():
    names = [f"su01-r0{r}-gpu{n:02d}" for r in (1, 2) for n in range(1, 19)] + ["a", "x7", "x9"]
    assert hostlist(names) == "su01-r01-gpu[01-18],su01-r02-gpu[01-18],a,x[7,9]"
    assert _expand(hostlist(names)) == names


def _slurm(files: dict[str, str], name: str) -> dict[str, str]:
    out = {}
    for line in files[f"scheduler/slurm/{name}"].splitlines():
        if line and not line.startswith("#"):
            head, _, rest = line.partition(" ")
            out[head] = rest
    return out


@pytest.mark.parametrize("name", ["dgx-b200-su", "gb200-nvl72-su", "superpod-4su"])
def test_tree_puts_every_node_under_exactly_one_leaf_group_sharing_its_leaves(name):
    _, plan = planned(name)
    lines = _slurm(render_tree(plan).files(), "topology-tree.conf")
    leaf_of: dict[str, str] = {}
    for head, rest in lines.items():
        if rest.startswith("Nodes="):
            for node in _expand(rest.removeprefix("Nodes=")):
                assert node not in leaf_of, f"{node} under two Slurm leaves"
                leaf_of[node] = head.removeprefix("SwitchName=")
    servers = [d for d in plan.devices if d.kind == "server"]
    assert set(leaf_of) == {d.name for d in servers}
    rail_leaves = {}
    for link in plan.links:
        if link.tier == "node-leaf" and link.plane == "data":
            rail_leaves.setdefault(link.a.device, set()).add(link.b.device)
    by_group: dict[str, set] = {}
    for node, group in leaf_of.items():
        by_group.setdefault(group, set()).add(frozenset(rail_leaves[node]))
    assert all(len(leaf_sets) == 1 for leaf_sets in by_group.values())
    tops = [rest for rest in lines.values() if rest.startswith("Switches=")]
    assert tops and set(_expand(tops[-1].removeprefix("Switches="))) <= {h.removeprefix("SwitchName=")
                                                                          for h in lines}


def test_three_tier_tree_has_per_su_spines_under_the_cores():
    spec, _ = planned("dgx-b200-su")
    plan = plan_cluster(scaled(spec, 16))
    tree = {s.name: s for s in plan.scheduler.tree}
    assert tree["data-cores"].switches == tuple(f"su{k:02d}-spines" for k in range(1, 17))
    assert len(tree["data-cores"].stands_for) == 64
    assert tree["su03-spines"].switches == ("su03-leafgroup1",)
    assert len(tree["su03-spines"].stands_for) == 8


def test_block_topology_is_one_block_per_nvlink_domain():
    _, plan = planned("gb200-nvl72-su")
    lines = _slurm(render_tree(plan).files(), "topology-block.conf")
    blocks = {h.removeprefix("BlockName="): _expand(r.removeprefix("Nodes=")) for h, r in lines.items()
              if h.startswith("BlockName=")}
    assert len(blocks) == 8 and lines["BlockSizes=18"] == ""
    for domain in plan.nvlink_domains:
        assert blocks[domain.name] == list(domain.members)


def test_no_block_file_without_rack_scale_domains():
    _, plan = planned("dgx-b200-su")
    assert "scheduler/slurm/topology-block.conf" not in render_tree(plan).files()


def test_node_labels_name_rack_domain_and_rails():
    _, plan = planned("gb200-nvl72-su")
    labels = yaml.safe_load(render_tree(plan).files()["scheduler/kubernetes/node-labels.yaml"])["nodes"]
    node = labels["su01-r05-gpu07"]
    assert node["topology.clusterforge.io/rack"] == "su01-r05"
    assert node["topology.clusterforge.io/nvlink-domain"] == "su01-r05-nvl72"
    assert node["topology.clusterforge.io/nvlink-gpus"] == "72"
    assert node["topology.clusterforge.io/rails"] == "4"
    assert plan.scheduler.labels("su01-r05-gpu07") == node
    value = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")  # Kubernetes label value grammar
    assert all(len(v) <= 63 and value.fullmatch(v) for n in labels.values() for v in n.values())
