"""Scheduler topology from the plan: the Slurm tree and block topologies and the Kubernetes node labels.

* tree (topology/tree): a node is attached to one leaf switch in Slurm, but a rail-optimized node has a
  NIC on every rail's leaf. All nodes of one leaf group reach the same rail leaves, so each leaf group
  is one Slurm leaf switch (a node under several leaves draws Slurm's "Multiple leaf switches contain
  nodes" warning, src/plugins/topology/tree/switch_record.c); above it the spine tier (every spine
  reaches every leaf group) and, three-tier, the per-SU spines under the cores.
* block (topology/block, Slurm 23.11+; its BlockSizes= line 24.05+): one block per NVLink domain (a
  rack-scale rack), block size the domain's trays.
* node labels: rack, SU, leaf group, spine group, NVLink domain and size, rail count, under
  `topology.clusterforge.io/`; the renderers and the Kubernetes step read this record, nothing re-derives it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clusterforge.plan.naming import su_label
from clusterforge.plan.objects import Device, Link
from clusterforge.vocab import DeviceKind, LinkTier, Plane

if TYPE_CHECKING:
    from clusterforge.plan.rackscale import NvlinkDomain

__all__ = ["TreeSwitch", "Block", "SchedulerTopology", "scheduler_topology", "LABEL_PREFIX"]

LABEL_PREFIX = "topology.clusterforge.io/"


@dataclass(frozen=True)
class TreeSwitch:
    name: str
    nodes: tuple[str, ...] = ()
    switches: tuple[str, ...] = ()
    stands_for: tuple[str, ...] = ()  # the planned switches this Slurm switch represents


@dataclass(frozen=True)
class Block:
    name: str
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class SchedulerTopology:
    tree: tuple[TreeSwitch, ...]
    blocks: tuple[Block, ...]
    block_size: int | None
    node_labels: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (node, ((key, value), ...)), node order

    def labels(self, node: str) -> dict[str, str]:
        return dict(next((labels for name, labels in self.node_labels if name == node), ()))


def _leaf_groups(servers: list[Device], links: Iterable[Link], leaves: dict[str, Device]
                 ) -> tuple[dict[str, str], list[TreeSwitch]]:
    by_node: dict[str, set[str]] = defaultdict(set)
    for link in links:
        if link.plane == Plane.DATA and link.tier == LinkTier.NODE_LEAF and link.b.device in leaves:
            by_node[link.a.device].add(link.b.device)
    groups: dict[tuple[str, ...], list[str]] = {}
    for server in servers:
        if by_node.get(server.name):
            groups.setdefault(tuple(sorted(by_node[server.name])), []).append(server.name)
    node_group: dict[str, str] = {}
    switches: list[TreeSwitch] = []
    per_su: dict[int | None, int] = defaultdict(int)
    for leaf_set, nodes in groups.items():
        su = leaves[leaf_set[0]].su
        per_su[su] += 1
        name = f"{su_label(su) if su is not None else 'site'}-leafgroup{per_su[su]}"
        switches.append(TreeSwitch(name, nodes=tuple(nodes), stands_for=leaf_set))
        node_group.update((node, name) for node in nodes)
    return node_group, switches


def scheduler_topology(devices: Iterable[Device], links: Iterable[Link], data_tiers: int,
                       domains: Iterable[NvlinkDomain]) -> SchedulerTopology:
    devices = list(devices)
    servers = [d for d in devices if d.kind == DeviceKind.SERVER]
    leaves = {d.name: d for d in devices if d.kind == DeviceKind.LEAF and d.plane == Plane.DATA}
    spines = sorted(d.name for d in devices if d.kind == DeviceKind.SPINE and d.plane == Plane.DATA)
    cores = sorted(d.name for d in devices if d.kind == DeviceKind.CORE and d.plane == Plane.DATA)
    node_group, groups = _leaf_groups(servers, links, leaves)
    su_of_group = {g.name: leaves[g.stands_for[0]].su for g in groups}
    tree = list(groups)
    parent: dict[str, str] = {}
    if groups and data_tiers == 3:
        su_spines: dict[int | None, list[str]] = defaultdict(list)
        for g in groups:
            su_spines[su_of_group[g.name]].append(g.name)
        tops = []
        for su, names in su_spines.items():
            name = f"{su_label(su) if su is not None else 'site'}-spines"
            stands = tuple(s for s in spines if s.startswith(f"{su_label(su)}-")) if su is not None else ()
            tree.append(TreeSwitch(name, switches=tuple(names), stands_for=stands))
            parent.update((g, name) for g in names)
            tops.append(name)
        tree.append(TreeSwitch("data-cores", switches=tuple(tops), stands_for=tuple(cores)))
    elif groups:
        tree.append(TreeSwitch("data-spines", switches=tuple(g.name for g in groups), stands_for=tuple(spines)))
        parent.update((g.name, "data-spines") for g in groups)
    domains = list(domains)
    domain_of = {m: d for d in domains for m in d.members}
    blocks = tuple(Block(d.name, d.members) for d in domains if d.members)
    block_size = min((len(b.nodes) for b in blocks), default=None)
    labels = []
    for server in servers:
        domain = domain_of.get(server.name)
        rails = sum(1 for i in server.interfaces if i.plane == Plane.DATA)
        pairs = [("su", str(server.su)), ("rack", server.rack or ""),
                 ("nvlink-domain", domain.name if domain else server.name),
                 ("nvlink-gpus", str(domain.gpus if domain else server.gpus)),
                 ("rails", str(rails))]
        if server.name in node_group:
            group = node_group[server.name]
            pairs += [("leaf-group", group), ("spine-group", parent.get(group, "data-spines"))]
        labels.append((server.name, tuple((LABEL_PREFIX + k, v) for k, v in pairs if v)))
    return SchedulerTopology(tuple(tree), blocks, block_size, tuple(labels))
