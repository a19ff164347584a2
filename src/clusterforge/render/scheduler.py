"""Scheduler files from the Plan's topology record (plan/topology.py): Slurm topology.conf in its tree and
block forms, and the Kubernetes node labels.

Files (keys of ``RenderedTree.scheduler``, written under ``scheduler/``):

* ``slurm/topology-tree.conf``: ``TopologyPlugin=topology/tree``; ``SwitchName=... Nodes=...`` per leaf
  group, ``SwitchName=... Switches=...`` above (topology.conf(5), Slurm 22.05+ as in Debian 12).
* ``slurm/topology-block.conf``: ``TopologyPlugin=topology/block`` (Slurm 24.05+ as written: 23.11 has the
  plugin with BlockLevels= where 24.05 has BlockSizes=); ``BlockName=... Nodes=...`` per NVLink domain and
  ``BlockSizes=``; only where the plan has rack-scale NVLink domains.
* ``kubernetes/node-labels.yaml``: ``nodes: {<node>: {<label>: <value>}}``, the labels the Kubernetes
  step applies.
* ``kubernetes/kueue.yaml``: Kueue's objects (render/kueue.py), where the plan queues GPU jobs (Kubernetes,
  GPU nodes and teams declared).

These are the plan's topology in both forms for any Slurm; with Slurm among the schedulers, render/slurm/
writes the one topology.conf the declared Slurm version reads, beside slurm.conf. Node lists use Slurm hostlist ranges
(``su01-r01-gpu[01-18]``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from clusterforge.plan import Plan
from clusterforge.plan.topology import SchedulerTopology
from clusterforge.render.kueue import kueue_manifests
from clusterforge.render.yamltext import to_yaml

__all__ = ["scheduler_files", "hostlist", "SCHEDULER_DIR"]

SCHEDULER_DIR = "scheduler"
_TRAILING = re.compile(r"^(.*?)(\d+)$")


def hostlist(names: Iterable[str]) -> str:
    """Slurm hostlist expression: runs of names that differ only in a trailing number of one width
    become prefix[a-b,c]; order of first appearance is kept per prefix."""
    runs: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    order: list[tuple[str, int] | str] = []
    for name in names:
        match = _TRAILING.match(name)
        if not match:
            plain.append(name)
            order.append(name)
            continue
        key = (match[1], len(match[2]))
        if key not in runs:
            runs[key] = []
            order.append(key)
        runs[key].append(int(match[2]))
    parts: list[str] = []
    for item in order:
        if isinstance(item, str):
            parts.append(item)
            continue
        prefix, width = item
        numbers = sorted(set(runs[item]))
        if len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        spans, start, last = [], numbers[0], numbers[0]
        for n in numbers[1:] + [None]:
            if n is not None and n == last + 1:
                last = n
                continue
            spans.append(f"{start:0{width}d}" if start == last else f"{start:0{width}d}-{last:0{width}d}")
            if n is not None:
                start = last = n
        parts.append(f"{prefix}[{','.join(spans)}]")
    return ",".join(parts)


def _tree(plan: Plan, topo: SchedulerTopology) -> str:
    lines = [f"# {plan.cluster}: Slurm topology/tree from the plan (install as topology.conf;",
             "# slurm.conf: TopologyPlugin=topology/tree). A rail-optimized node has a NIC on every rail",
             "# leaf, so each leaf group (the nodes sharing the same rail leaves) is one Slurm leaf switch."]
    for switch in topo.tree:
        if switch.stands_for:
            lines.append(f"# {switch.name}: {hostlist(switch.stands_for)}")
        children = f"Nodes={hostlist(switch.nodes)}" if switch.nodes else f"Switches={hostlist(switch.switches)}"
        lines.append(f"SwitchName={switch.name} {children}")
    return "\n".join(lines) + "\n"


def _block(plan: Plan, topo: SchedulerTopology) -> str:
    lines = [f"# {plan.cluster}: Slurm topology/block from the plan (Slurm 24.05+, BlockSizes; install as"
             " topology.conf;",
             "# slurm.conf: TopologyPlugin=topology/block). One block per NVLink domain (a rack-scale rack)."]
    lines += [f"BlockName={block.name} Nodes={hostlist(block.nodes)}" for block in topo.blocks]
    lines.append(f"BlockSizes={topo.block_size}")
    return "\n".join(lines) + "\n"


def scheduler_files(plan: Plan) -> dict[str, str]:
    topo = plan.scheduler
    if topo is None:
        return {}
    files: dict[str, str] = {}
    if topo.tree:
        files["slurm/topology-tree.conf"] = _tree(plan, topo)
    if topo.blocks:
        files["slurm/topology-block.conf"] = _block(plan, topo)
    files["kubernetes/node-labels.yaml"] = to_yaml({"nodes": {node: dict(labels) for node, labels in
                                                             topo.node_labels}})
    if plan.queueing is not None:
        files["kubernetes/kueue.yaml"] = kueue_manifests(plan.queueing)
    return files
