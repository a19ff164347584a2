"""Which parent port a child's uplink lands on: one function per tier, used for built links and for
the ports parents provision for the whole envelope (so adding an SU never changes a parent's config).
"""

from __future__ import annotations

from typing import NamedTuple

from clusterforge.plan.fabric_dims import DataDims, StorageDims
from clusterforge.plan.naming import (
    agg_name,
    compute_rack,
    core_name,
    data_leaf,
    mgmt_tor,
    oob_tor,
    spine_name,
    storage_core,
    storage_leaf,
    storage_pod_spine,
    storage_spine,
    su_spine_name,
)
from clusterforge.vocab import Plane

__all__ = ["Uplink", "data_leaf_uplink", "data_spine_uplink", "storage_leaf_uplink", "storage_spine_uplink",
           "storage_server_port", "tor_uplink", "leaf_name"]


class Uplink(NamedTuple):  # a named tuple: built for every envelope link (half a million at 512 SUs)
    child: str
    child_port: int  # port index on the child
    parent: str
    parent_port: int  # port index on the parent
    p2p_index: int  # index of the /31 in the tier's range


def leaf_name(dims: DataDims, su: int, local: int) -> str:
    return data_leaf(su, local // dims.leaves_per_rail, local % dims.leaves_per_rail, dims.leaves_per_rail)


def data_leaf_uplink(dims: DataDims, su: int, local: int, i: int) -> Uplink:
    """Leaf uplink i: spread evenly over the spines the leaf reaches (two tiers: its rail group's, which
    is every spine when spine_groups is 1; three tiers: its SU's). A spine's port is the leaf's ordinal
    among the leaves it serves x parallel links + i, so a new SU's leaves land on ports no other leaf uses."""
    glob = (su - 1) * dims.leaves_per_su + local
    first_up = dims.nodes_per_leaf + dims.reserved_per_leaf
    if dims.tiers == 2:
        per_group, group_leaves = dims.spines_per_group, dims.group_leaves_per_su
        group, within = divmod(local, group_leaves)  # a leaf's rail block: local = rail x leaves_per_rail + j
        s, par = i % per_group, i // per_group
        ordinal = (su - 1) * group_leaves + within  # = glob when spine_groups is 1
        parent, port = spine_name(group * per_group + s), ordinal * dims.links_per_leaf_spine + par
        return Uplink(leaf_name(dims, su, local), first_up + i, parent, port, glob * dims.uplinks_per_leaf + i)
    s, par = i % dims.spines, i // dims.spines
    parent, port = su_spine_name(su, s), local * dims.links_per_leaf_spine + par
    return Uplink(leaf_name(dims, su, local), first_up + i, parent, port, glob * dims.uplinks_per_leaf + i)


def data_spine_uplink(dims: DataDims, su: int, j: int, i: int) -> Uplink:
    """Three tiers: SU spine j spreads its uplinks evenly over every core of group j."""
    per_core = dims.spine_uplinks // dims.cores_per_group
    core = core_name(j * dims.cores_per_group + i % dims.cores_per_group)
    spine_down = dims.leaves_per_su * dims.links_per_leaf_spine
    glob_spine = (su - 1) * dims.spines + j
    return Uplink(su_spine_name(su, j), spine_down + i, core, (su - 1) * per_core + i // dims.cores_per_group,
                  glob_spine * dims.spine_uplinks + i)


def storage_leaf_uplink(dims: StorageDims, max_nodes: int, su: int, k: int, i: int) -> Uplink:
    glob = (su - 1) * dims.leaves_per_su + k
    s, par = i % dims.spines, i // dims.spines
    if dims.tiers == 2:
        parent, port = storage_spine(s), glob * dims.links_per_leaf_spine + par
    else:
        pod, position = divmod(su - 1, dims.sus_per_pod)
        parent = storage_pod_spine(pod, s)
        port = (position * dims.leaves_per_su + k) * dims.links_per_leaf_spine + par
    return Uplink(storage_leaf(su, k), max_nodes + i, parent, port, glob * dims.uplinks_per_leaf + i)


def storage_spine_uplink(dims: StorageDims, pod: int, j: int, i: int) -> Uplink:
    """Three-tier storage: pod spine j spreads its uplinks evenly over every core of group j."""
    per_core = dims.spine_uplinks // dims.cores_per_group
    core = storage_core(j * dims.cores_per_group + i % dims.cores_per_group)
    spine_down = dims.sus_per_pod * dims.leaves_per_su * dims.links_per_leaf_spine
    return Uplink(storage_pod_spine(pod, j), spine_down + i, core, pod * per_core + i // dims.cores_per_group,
                  (pod * dims.spines + j) * dims.spine_uplinks + i)


def storage_server_port(dims: StorageDims, port: int) -> tuple[str, int]:
    """(top-tier switch, port index) of storage-server port `port` (= 2 x server + member). Two tiers: member k
    of a server lands on spine k of the server's pair (StorageDims.server_pair), whose subnet the server is in."""
    if dims.tiers == 2:
        server, member = divmod(port, 2)
        pair, position = dims.server_pair(server)
        return storage_spine(2 * pair + member), dims.server_port_base + position
    return storage_core(port % dims.server_cores), dims.server_port_base + port // dims.server_cores


def tor_uplink(plane: str, su: int, rack: int, a: int, per_agg: int, max_racks: int, tor_up_port: int) -> Uplink:
    group, position = divmod(su - 1, per_agg)
    tor = (mgmt_tor if plane == Plane.MANAGEMENT else oob_tor)(compute_rack(su, rack))
    return Uplink(tor, tor_up_port, agg_name(plane, 2 * group + a), position * max_racks + (rack - 1), -1)
