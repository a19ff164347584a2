"""Fabric dimensions from the design envelope: pure arithmetic, no device lists.

Everything here depends on the declared envelope (max SUs, nodes, rails), never on how many
SUs are built today, so adding an SU never resizes or renumbers what exists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from clusterforge.model import ClusterSpec, Loc, SwitchModel
from clusterforge.model import Plane as PlaneDecl
from clusterforge.plan.errors import PlanError
from clusterforge.plan.plane_models import plane_models
from clusterforge.vocab import Plane

__all__ = ["DataDims", "StorageDims", "data_dims", "storage_dims", "agg_groups", "sus_per_agg", "access_cores",
           "ACCESS_CORE_UPLINKS", "CONTROL_NODES_MAX", "site_hosts_max", "site_access_switches"]


def _split(ports: int, ratio: float) -> int:
    """Most downlinks a switch of `ports` ports can have at oversubscription `ratio`."""
    return int(ports * ratio / (1 + ratio))


@dataclass(frozen=True)
class DataDims:
    rails: int
    nodes_per_leaf: int
    reserved_per_leaf: int
    leaves_per_rail: int
    leaves_per_su: int
    uplinks_per_leaf: int
    tiers: int
    spines: int  # 2-tier: site spines; 3-tier: spines per SU
    links_per_leaf_spine: int
    spine_uplinks: int  # 3-tier only
    cores_per_group: int  # 3-tier only
    cores: int
    leaf_ratio: float
    spine_ratio: float
    notes: tuple[str, ...]
    # 2-tier: spine group g (spines g x spines_per_group ... + spines_per_group - 1) serves only the leaves of
    # rails g x rails_per_group ... (g + 1) x rails_per_group - 1; 1: every spine reaches every leaf
    spine_groups: int = 1

    @property
    def rails_per_group(self) -> int:
        return self.rails // self.spine_groups

    @property
    def spines_per_group(self) -> int:
        return self.spines // self.spine_groups

    @property
    def group_leaves_per_su(self) -> int:
        """Leaves of one SU under one spine group: its rails' leaves."""
        return self.rails_per_group * self.leaves_per_rail


def _spine_count(total_uplinks_per_leaf: int, leaves: int, spine_ports: int, minimum: int) -> int | None:
    """Smallest spine count dividing the leaf uplinks with every leaf reaching every spine."""
    minimum = min(minimum, total_uplinks_per_leaf)  # a leaf with 1 uplink reaches 1 spine
    for spines in range(1, total_uplinks_per_leaf + 1):
        if total_uplinks_per_leaf % spines or spines < minimum:
            continue
        if leaves * (total_uplinks_per_leaf // spines) <= spine_ports:
            return spines
    return None


def _leaf_spine_models(spec: ClusterSpec, name: str) -> tuple[PlaneDecl, Loc, SwitchModel, SwitchModel]:
    """A routed fabric plane's declaration, where it is declared, and its leaf and spine switch models
    (both required)."""
    plane = spec.networks.plane(name)
    loc = ("networks", name)
    if not plane.leaf_model or not plane.spine_model:
        raise PlanError([(loc, f"the {name} plane needs leaf_model and spine_model")])
    return plane, loc, spec.catalog.switches[plane.leaf_model], spec.catalog.switches[plane.spine_model]


def data_dims(spec: ClusterSpec) -> DataDims:
    plane, loc, leaf, spine = _leaf_spine_models(spec, "data")
    env = spec.envelope
    ratio = plane.oversubscription
    down_max = _split(leaf.ports, ratio) - plane.reserved_leaf_ports
    if down_max < 1:
        raise PlanError([((*loc, "reserved_leaf_ports"), f"{plane.reserved_leaf_ports} reserved ports leave no"
                          f" downlinks on a {leaf.ports}-port leaf at {ratio}:1")])
    nodes_per_leaf = min(down_max, env.max_nodes_per_su)
    leaves_per_rail = math.ceil(env.max_nodes_per_su / nodes_per_leaf)
    down = nodes_per_leaf + plane.reserved_leaf_ports
    uplinks = math.ceil(down / ratio)
    leaves_per_su = env.max_rails * leaves_per_rail
    leaves_max = env.max_sus * leaves_per_su
    notes: list[str] = []
    if plane.spine_groups > 1:
        return _grouped_dims(spec, DataDims(env.max_rails, nodes_per_leaf, plane.reserved_leaf_ports, leaves_per_rail,
                                            leaves_per_su, uplinks, 2, 0, 0, 0, 0, 0, down / uplinks, 1.0, (),
                                            plane.spine_groups), spine)
    spines = _spine_count(uplinks, leaves_max, spine.ports, plane.min_spines)
    if spines is not None:
        links = uplinks // spines
        return DataDims(env.max_rails, nodes_per_leaf, plane.reserved_leaf_ports, leaves_per_rail, leaves_per_su,
                        uplinks, 2, spines, links, 0, 0, 0, down / uplinks, 1.0, tuple(notes))
    # Three tiers: spines per SU, a core tier shared by all SUs.
    core_model = spec.catalog.switches[plane_models(spec, Plane.DATA).core]
    spine_down = _split(spine.ports, ratio)
    su_spines = _spine_count(uplinks, leaves_per_su, spine_down, plane.min_spines)
    if su_spines is None:
        raise PlanError([((*loc, "spine_model"), f"{leaves_per_su} leaves per SU with {uplinks} uplinks each do not"
                          f" fit {spine.ports}-port spines at {ratio}:1")])
    links = uplinks // su_spines
    spine_down_used = leaves_per_su * links
    spine_up = math.ceil(spine_down_used / ratio)
    # every SU spine j spreads its uplinks evenly over every core of group j: all SUs reach each other
    cores_per_group = next((d for d in _divisors(spine_up) if env.max_sus * (spine_up // d) <= core_model.ports),
                           None)
    if cores_per_group is None:
        raise PlanError([((*loc, "core_model"), f"{env.max_sus} SUs need cores with at least {env.max_sus} ports (one"
                          f" link from every SU's spine), {plane.core_model or plane.spine_model} has"
                          f" {core_model.ports}. A fourth tier is not planned: declare a larger"
                          " networks.data.core_model, or a smaller envelope.max_sus")])
    notes.append(f"{leaves_max} leaves exceed one spine tier's radix ({spine.ports}): three tiers")
    return DataDims(env.max_rails, nodes_per_leaf, plane.reserved_leaf_ports, leaves_per_rail, leaves_per_su,
                    uplinks, 3, su_spines, links, spine_up, cores_per_group, su_spines * cores_per_group,
                    down / uplinks, spine_down_used / spine_up, tuple(notes))


def _grouped_dims(spec: ClusterSpec, dims: DataDims, spine: SwitchModel) -> DataDims:
    """Rail-group spines: `spine_groups` disjoint two-tier fabrics, group g's spines reaching only the
    leaves of its block of rails in every SU (the DGX SuperPOD B300 Ethernet RA's twin planes: 16 SUs of
    256 leaves on 128 spines, no cores). Each group is sized as one spine tier for its share of the
    envelope's leaves; there is no core tier above rail groups, so a group that outgrows one spine's
    radix is refused."""
    plane = spec.networks.data
    groups = dims.spine_groups
    group_leaves = spec.envelope.max_sus * dims.leaves_per_su // groups
    per_group = _spine_count(dims.uplinks_per_leaf, group_leaves, spine.ports, plane.min_spines)
    if per_group is None:
        raise PlanError([(("networks", "data", "spine_groups"), f"{groups} spine groups of"
                          f" {dims.rails // groups} rail(s) each have {group_leaves} leaves over the envelope's"
                          f" {spec.envelope.max_sus} SUs with {dims.uplinks_per_leaf} uplinks each, more than one"
                          f" tier of {spine.ports}-port spines ({plane.spine_model}) takes; rail-group spines have"
                          " no core tier. Allowed: more spine_groups (a divisor of envelope.max_rails), a smaller"
                          " envelope.max_sus, a larger spine_model, or spine_groups: 1 (three tiers)")])
    return replace(dims, spines=groups * per_group, links_per_leaf_spine=dims.uplinks_per_leaf // per_group)


@dataclass(frozen=True)
class StorageDims:
    """Two tiers: every storage leaf reaches the site storage spines, which also take the storage servers:
    each server on one spine pair, with that pair's server subnet (docs/storage-fabric.md).

    Three tiers (the envelope's leaves do not fit one spine tier): SUs are grouped into pods of
    `sus_per_pod`; each pod has `spines` storage spines, every pod spine j reaches core group j, and
    the storage servers hang off the first `server_cores` (2) cores.
    """

    leaves_per_su: int
    uplinks_per_leaf: int
    spines: int  # 2-tier: site storage spines; 3-tier: spines per pod
    links_per_leaf_spine: int
    server_port_base: int  # first server-facing port on a spine (2-tier) or core (3-tier)
    leaf_ratio: float
    tiers: int = 2
    sus_per_pod: int = 0  # 3-tier only
    pods: int = 0
    spine_uplinks: int = 0
    cores_per_group: int = 0
    cores: int = 0
    server_cores: int = 0
    spine_ratio: float = 1.0

    @property
    def site_switches(self) -> int:
        """Storage switches in site racks (and site oob addresses): spines, or cores plus pod spines."""
        return self.spines if self.tiers == 2 else self.cores + self.pods * self.spines

    @property
    def server_pairs(self) -> int:
        """Top-switch pairs that take storage servers, each with its own server subnet: every spine pair
        (two tiers; an odd last spine takes none), or the one server core pair (three tiers)."""
        return max(1, self.spines // 2) if self.tiers == 2 else 1

    def server_pair(self, server: int) -> tuple[int, int]:
        """(pair, position in the pair's subnet) of storage server `server` (0-based): round robin over the
        pairs, so adding a server never moves another."""
        return server % self.server_pairs, server // self.server_pairs


SERVER_CORES_MAX = 2  # 3-tier: every storage server on the same core pair (one bond member each), so any
# two servers share a core; a server pair spread over more cores would need a valley (core-spine-core) path


def storage_dims(spec: ClusterSpec) -> StorageDims:
    plane, loc, leaf, spine = _leaf_spine_models(spec, "storage")
    env = spec.envelope
    ratio = plane.oversubscription
    down = env.max_nodes_per_su  # one port of each node's bond per leaf of the pair
    uplinks = math.ceil(down / ratio)
    if down + uplinks > leaf.ports:
        raise PlanError([((*loc, "leaf_model"), f"a storage leaf needs {down} node ports + {uplinks} uplinks;"
                          f" {plane.leaf_model} has {leaf.ports}")])
    leaves_max = env.max_sus * 2
    for spines in range(max(2, plane.min_spines), uplinks + 1):
        if uplinks % spines:
            continue
        links = uplinks // spines
        if leaves_max * links + math.ceil(env.storage_servers_max / max(1, spines // 2)) <= spine.ports:
            return StorageDims(2, uplinks, spines, links, leaves_max * links, down / uplinks)
    return _storage_three_tiers(spec, uplinks, down / uplinks)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if not n % d]


def _storage_three_tiers(spec: ClusterSpec, uplinks: int, leaf_ratio: float) -> StorageDims:
    """Pods as large as a spine's downlinks allow (one link from each leaf to each of `uplinks` pod
    spines); every pod spine j spreads its uplinks evenly over every core of group j, so every leaf
    reaches every core (up-down paths between all pods, checked by plan.fabric_reach)."""
    plane = spec.networks.storage
    env = spec.envelope
    loc = ("networks", "storage")
    models = plane_models(spec, Plane.STORAGE)
    spine = spec.catalog.switches[models.spine]
    core_model = models.core
    core = spec.catalog.switches[core_model]
    ratio = plane.oversubscription
    spine_down = _split(spine.ports, ratio)
    spines, links = uplinks, 1
    if 2 * links > spine_down:
        raise PlanError([((*loc, "spine_model"), f"{plane.spine_model} ({spine.ports} ports) cannot take the 2 storage"
                          f" leaves of one SU at {ratio:g}:1")])
    per_pod = min(spine_down // (2 * links), env.max_sus)
    pods = math.ceil(env.max_sus / per_pod)
    down_used = 2 * per_pod * links
    spine_up = math.ceil(down_used / ratio)
    server_ports = env.storage_servers_max * 2
    for per_group in _divisors(spine_up):
        cores = spines * per_group
        server_cores = min(cores, SERVER_CORES_MAX) if server_ports else 0
        base = pods * spine_up // per_group
        if base + (math.ceil(server_ports / server_cores) if server_ports else 0) <= core.ports:
            return StorageDims(2, uplinks, spines, links, base, leaf_ratio, 3, per_pod, pods, spine_up, per_group,
                               cores, server_cores, down_used / spine_up)
    need = pods + (math.ceil(server_ports / min(spines * spine_up, SERVER_CORES_MAX)) if server_ports else 0)
    raise PlanError([((*loc, "core_model"), f"{env.max_sus} SUs make {pods} storage pods of {per_pod} SUs; a core"
                      f" reaching every pod (and the storage servers) needs {need} ports, {core_model} has"
                      f" {core.ports}. A fourth tier is not planned: declare a larger networks.storage.core_model"
                      " (or spine_model), or a smaller envelope.max_sus")])


ACCESS_CORE_UPLINKS = 2  # past one aggregation pair: each aggregation switch's last two ports go to the core pair


CONTROL_NODES_MAX = 3  # control.nodes is 0, 1 or 3


def site_hosts_max(spec: ClusterSpec) -> int:
    """Host ports a plane's site access switches provide (plan/site_access.py): none while the envelope has
    no site host (no storage server and no control node)."""
    if not spec.envelope.storage_servers_max and not spec.control.nodes:
        return 0
    return spec.envelope.storage_servers_max + CONTROL_NODES_MAX


def site_access_switches(spec: ClusterSpec, plane: str) -> int:
    hosts = site_hosts_max(spec)
    model = spec.networks.plane(plane).leaf_model
    return math.ceil(hosts / spec.catalog.switches[model].ports) if hosts and model else 0


def sus_per_agg(spec: ClusterSpec) -> int:
    """SUs one management/oob aggregation pair serves: one port per rack of the envelope (both planes).
    One pair serves them all when it also has a port for every site access switch; past that, each pair
    keeps its last two ports for the core pair (which takes the site access switches)."""
    fewest = min(spec.catalog.switches[model].ports
                 for p in (Plane.MANAGEMENT, Plane.OOB) if (model := spec.networks.plane(p).spine_model))
    racks = spec.envelope.max_racks_per_su
    site = max(site_access_switches(spec, p) for p in (Plane.MANAGEMENT, Plane.OOB))
    per = fewest // racks
    if per >= 1 and spec.envelope.max_sus * racks + site > fewest:
        per = min((fewest - ACCESS_CORE_UPLINKS) // racks, max(spec.envelope.max_sus - 1, 1))
    if per < 1:
        raise PlanError([(("networks", "management", "spine_model"), f"an aggregation switch with {fewest} ports"
                          f" cannot take the {racks} ToR uplinks of one SU (and its core uplinks)")])
    return per


def agg_groups(spec: ClusterSpec) -> int:
    """Aggregation pairs per access plane, sized by the envelope."""
    return math.ceil(spec.envelope.max_sus / sus_per_agg(spec))


def access_cores(spec: ClusterSpec) -> int:
    """Core switches per access plane: a pair joining every aggregation pair, once there is more than one.

    Each core takes one link from every aggregation switch of its plane; a core model without the
    ports is refused naming networks.<plane>.core_model.
    """
    groups = agg_groups(spec)
    if groups == 1:
        return 0
    problems = []
    for plane in (Plane.MANAGEMENT, Plane.OOB):
        decl = spec.networks.plane(plane)
        model = decl.core_model or decl.spine_model
        if model and spec.catalog.switches[model].ports < 2 * groups:
            problems.append((("networks", plane, "core_model"), f"{2 * groups} aggregation switches need an access"
                             f" core with {2 * groups} ports, {model} has {spec.catalog.switches[model].ports};"
                             " declare a larger core_model"))
    if problems:
        raise PlanError(problems)
    return 2
