"""Up-down reachability of a Clos fabric: every two host endpoints share a switch above them.

In a leaf/spine[/core] fabric traffic climbs from the source's switch to a common ancestor and
descends (BGP's AS-path rules forbid the valley: core -> spine -> core). So two switches that
carry hosts talk only if the sets of switches reachable going up from each intersect. An
endpoint is a host NIC, or a bond (the union of what its members reach). A
three-tier plan whose cores each reach only some SU spines partitions the fabric even though
every port, address and ratio is right; this check finds that. Pure, on a finished Plan.

Links are oriented (a = child, b = parent); a switch-to-switch link climbs from a to b. Every
plane is checked: the management and oob planes climb ToR -> aggregation pair (-> access core).
A data plane with rail-group spines (`FabricSummary.spine_groups` > 1) is that many fabrics by
design: endpoints are compared only with the endpoints of rails in their own group.
"""

from __future__ import annotations

from collections import defaultdict

from clusterforge.plan.objects import Plan
from clusterforge.vocab import DeviceKind

__all__ = ["unreachable_pairs"]


def unreachable_pairs(plan: Plan) -> list[str]:
    kinds = {d.name: d.kind for d in plan.devices}
    hosts = frozenset(DeviceKind.HOSTS)
    is_host = {name: kind in hosts for name, kind in kinds.items()}
    bond_of = {(d.name, member): iface.name for d in plan.devices if d.kind in hosts
               for iface in d.interfaces for member in iface.members}
    grouped = {name: f for name, f in plan.fabric.items() if f.spine_groups > 1}
    rail_of = {(d.name, iface.name): iface.rail for d in plan.devices if d.kind in hosts
               for iface in d.interfaces if iface.rail is not None} if grouped else {}
    parents: dict[str, set[str]] = defaultdict(set)
    # (plane, rail group) -> endpoint -> the switches it is cabled to
    endpoints: dict[tuple[str, int], dict[tuple[str, str], set[str]]] = defaultdict(lambda: defaultdict(set))
    for link in plan.links:
        child, parent = link.a, link.b
        a, b = is_host.get(child.device), is_host.get(parent.device)
        if a is None or b is None or b:
            continue  # unknown devices are another check's problem; nothing climbs to a host
        if a:  # a NIC, or a bond through any of its members
            nic = bond_of.get((child.device, child.port), child.port)
            fabric = grouped.get(link.plane)
            group = fabric.rail_group(rail_of.get((child.device, nic))) if fabric is not None else 0
            endpoints[(link.plane, group)][(child.device, nic)].add(parent.device)
        else:
            parents[child.device].add(parent.device)
    memo: dict[str, frozenset[str]] = {}

    def above(switch: str) -> frozenset[str]:
        found = memo.get(switch)
        if found is None:
            found = frozenset({switch}).union(*(above(p) for p in parents.get(switch, ())))
            memo[switch] = found
        return found

    strictly_above: dict[str, frozenset[str]] = {}

    def reach_of(switch: str) -> frozenset[str]:
        """What a switch reaches above itself; a top switch stands for itself."""
        found = strictly_above.get(switch)
        if found is None:
            found = above(switch) - {switch} if switch in parents else frozenset({switch})
            strictly_above[switch] = found
        return found

    problems: list[str] = []
    for plane, rail_group in sorted(endpoints):
        groups: dict[frozenset[str], tuple[str, str]] = {}
        storage: dict[frozenset[str], tuple[str, str]] = {}
        for endpoint, switches in endpoints[(plane, rail_group)].items():  # Plan order: deterministic
            # what the endpoint's switches reach above themselves: endpoints under the same spines
            # group together, so the pairwise test is per SU or pod
            if len(switches) == 1:
                reach = reach_of(next(iter(switches)))
            else:
                reach = frozenset().union(*(reach_of(s) for s in switches))
            (storage if kinds[endpoint[0]] == DeviceKind.STORAGE else groups).setdefault(reach, endpoint)
        distinct = list(groups.items())
        apart = [(x, y) for i, (up_x, x) in enumerate(distinct) for up_y, y in distinct[i + 1:]
                 if up_x.isdisjoint(up_y)]
        # storage servers must reach every compute endpoint (server-to-server traffic across top
        # switch pairs crosses a leaf: plan.prefix_reach.storage_pair_problems)
        apart += [(x, y) for up_x, x in storage.items() for up_y, y in distinct if up_x.isdisjoint(up_y)]
        if apart:
            (host_x, nic_x), (host_y, nic_y) = apart[0]
            problems.append(f"{plane} plane: {host_x}:{nic_x} and {host_y}:{nic_y} share no switch above their"
                            f" switches, so they have no up-down path (the fabric is partitioned; {len(apart)} such"
                            " pairs of endpoint groups)")
    return problems
