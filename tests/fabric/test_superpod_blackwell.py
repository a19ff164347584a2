"""The published DGX SuperPOD compute-fabric component counts, reproduced by the planner at every SU
count the reference architectures publish.

Sources (the RAs' "DGX SuperPOD Architecture" pages, docs.nvidia.com/dgx-superpod/):
* reference-architecture-scalable-infrastructure-b200: SU = 32 DGX B200, NDR 400G, QM9700; table of
  leaf / spine / core switches and node-leaf / leaf-spine / spine-core cables for 2-64 SUs.
* reference-architecture/scalable-infrastructure-b300-xdr: SU = 72 DGX B300, XDR 800G, Quantum-X800
  Q3400 (144 ports); table of leaf / spine switches and node-leaf / leaf-spine cables for 1-18 SUs
  (spines are not leaves / 2: each leaf's 72 uplinks are spread evenly over the spines).
* reference-architecture/scalable-infrastructure-b300 (Ethernet, DC busbar): SU = 64 DGX B300, each
  ConnectX-8 as 2 x 400GbE (16 rails), Spectrum-X SN5600; table of leaf / spine switches and node-leaf /
  leaf-spine cables for 1-16 SUs (Table 3, "Larger DGX SuperPOD component counts", on its "DGX
  SuperPOD Architecture" page). A cable there is one 800G port carrying two 400G links, so the plan's
  400G links are twice the published cables. The fabric is twin-planar (its "Network Fabrics" page:
  each GPU 2 x 400GbE on two planes): declared as `networks.data.spine_groups: 2`, each plane's 8 rails
  with spines of their own, every row of the table is reproduced, 16 SUs included (256 leaves and 128
  spines, 64 per plane, one link from each of a plane's 128 leaves to each; no cores). Spines that
  reach every leaf (spine_groups 1) reproduce 1-8 SUs and go to three tiers at 16; one spine group per
  rail (16) reproduces 4-16 SUs but not 1 or 2 (it cannot give a rail less than 2 spines).
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from clusterforge.model import ClusterSpec, load_cluster
from clusterforge.model.scale import scaled
from clusterforge.plan import plan_cluster
from clusterforge.plan.fabric_checks import check_fabric
from clusterforge.plan.fabric_dims import data_dims
from clusterforge.vocab import LinkTier

REPO = Path(__file__).resolve().parents[2]

# SUs: (leaf, spine, core, node-leaf cables, leaf-spine cables, spine-core cables)
B200_PUBLISHED = {
    2: (16, 8, 0, 512, 512, 0),
    4: (32, 16, 0, 1024, 1024, 0),
    8: (64, 32, 0, 2048, 2048, 0),
    16: (128, 128, 64, 4096, 4096, 4096),
    32: (256, 256, 128, 8192, 8192, 8192),
    64: (512, 512, 256, 16384, 16384, 16384),
}
# SUs: (leaf, spine, node-leaf cables, leaf-spine cables); the 18-SU row's 10,368 cables = 1,296 x 8
B300_XDR_PUBLISHED = {
    1: (8, 4, 576, 576),
    2: (16, 8, 1152, 1152),
    4: (32, 18, 2304, 2304),
    8: (64, 36, 4608, 4608),
    18: (144, 72, 10368, 10368),
}


@cache
def b200_su() -> ClusterSpec:
    return load_cluster(REPO / "inventory" / "dgx-b200-su.yaml")[0]


@cache
def b300_xdr_su() -> ClusterSpec:
    """The B200 SU's declaration with the B300 XDR RA's SU: 72 DGX B300 (4 per rack, 18 racks) on Q3400s."""
    data = b200_su().model_dump()
    data["envelope"].update(max_nodes_per_su=72, max_racks_per_su=18)
    data["scalable_units"] = [{**data["scalable_units"][0], "server_model": "dgx-b300", "nodes": 72, "racks": 18,
                               "nodes_per_rack": 4}]
    data["teams"] = []
    data["networks"]["data"].update(leaf_model="q3400", spine_model="q3400")
    # 72 nodes per SU outgrow a 64-port storage leaf pair; the storage plane is not under test, so it gets
    # a 128 x 400G switch at 2:1 (an SN5600 broken out 2 x 400G; no SONiC port map, hence Cumulus)
    switches = data["catalog"]["switches"]
    switches["storage-128x400"] = {**switches["sn5400"], "ports": 128, "sonic": None, "source": "test only"}
    data["networks"]["storage"].update(leaf_model="storage-128x400", spine_model="storage-128x400", nos="cumulus",
                                       oversubscription=2.0)
    return ClusterSpec.model_validate(data)


# SUs: (leaf, spine, node-leaf cables, leaf-spine cables)
B300_ETHERNET_PUBLISHED = {
    1: (16, 8, 512, 512),
    2: (32, 16, 1024, 1024),
    4: (64, 32, 2048, 2048),
    8: (128, 64, 4096, 4096),
    16: (256, 128, 8192, 8192),
}


@cache
def b300_ethernet_su(spine_groups: int = 1) -> ClusterSpec:
    """The B300 Ethernet RA's SU: 64 DGX B300 (4 per rack, 16 racks), each ConnectX-8 two 400GbE planes (16
    rails), on SN5600s broken out 2 x 400G (128 ports; a test model without a SONiC port map, so Cumulus);
    `spine_groups` as declared on the data plane (2: a plane's 8 rails per spine group)."""
    data = b300_xdr_su().model_dump()
    data["envelope"].update(max_nodes_per_su=64, max_racks_per_su=16, max_rails=16)
    data["scalable_units"] = [{**data["scalable_units"][0], "server_model": "dgx-b300-eth", "nodes": 64,
                               "racks": 16, "nodes_per_rack": 4}]
    switches = data["catalog"]["switches"]
    switches["sn5600-2x400"] = {**switches["sn5600"], "ports": 128, "speed_gbps": 400, "lanes_per_port": 4,
                                "sonic": None, "source": "test only: SN5600 in 2 x 400G breakout"}
    data["networks"]["data"].update(transport="roce", nos="cumulus", mtu=9000, leaf_model="sn5600-2x400",
                                    spine_model="sn5600-2x400", spine_groups=spine_groups)
    return ClusterSpec.model_validate(data)


def _counts(plan) -> tuple[int, ...]:
    data = plan.fabric["data"]
    tiers = Counter(link.tier for link in plan.links if link.plane == "data")
    return (data.leaves, data.spines, data.cores, tiers[LinkTier.NODE_LEAF], tiers[LinkTier.DATA_LEAF_SPINE],
            tiers[LinkTier.DATA_SPINE_CORE])


@pytest.mark.parametrize("sus", sorted(B200_PUBLISHED))
def test_dgx_b200_superpod_counts(sus):
    plan = plan_cluster(scaled(b200_su(), sus))
    assert _counts(plan) == B200_PUBLISHED[sus]
    assert plan.fabric["data"].tiers == (3 if sus >= 16 else 2)


@pytest.mark.parametrize("sus", sorted(B300_XDR_PUBLISHED))
def test_dgx_b300_xdr_superpod_counts(sus):
    plan = plan_cluster(scaled(b300_xdr_su(), sus))
    leaves, spines, cores, node_leaf, leaf_spine, spine_core = _counts(plan)
    assert (leaves, spines, node_leaf, leaf_spine) == B300_XDR_PUBLISHED[sus]
    assert (cores, spine_core) == (0, 0)
    assert {d.model for d in plan.devices if d.plane == "data" and d.kind in ("leaf", "spine")} == {"q3400"}


def _ethernet_counts(plan) -> tuple[int, ...]:
    """(leaves, spines, cores, node-leaf cables, leaf-spine cables): two 400G links per published 800G cable."""
    leaves, spines, cores, node_leaf, leaf_spine, _ = _counts(plan)
    assert node_leaf % 2 == 0 and leaf_spine % 2 == 0
    return leaves, spines, cores, node_leaf // 2, leaf_spine // 2


@pytest.mark.parametrize("sus", sorted(B300_ETHERNET_PUBLISHED))
def test_dgx_b300_ethernet_twin_plane_superpod_counts(sus):
    """Every published row, 16 SUs included, from one declared shape: a spine group per plane."""
    plan = plan_cluster(scaled(b300_ethernet_su(spine_groups=2), sus))
    leaves, spines, node_leaf, leaf_spine = B300_ETHERNET_PUBLISHED[sus]
    assert _ethernet_counts(plan) == (leaves, spines, 0, node_leaf, leaf_spine)
    assert plan.fabric["data"].tiers == 2 and plan.fabric["data"].spine_groups == 2


@pytest.mark.parametrize("sus", [s for s in sorted(B300_ETHERNET_PUBLISHED) if s <= 8])
def test_dgx_b300_ethernet_superpod_counts_with_spines_reaching_every_leaf(sus):
    plan = plan_cluster(scaled(b300_ethernet_su(), sus))
    leaves, spines, node_leaf, leaf_spine = B300_ETHERNET_PUBLISHED[sus]
    assert _ethernet_counts(plan) == (leaves, spines, 0, node_leaf, leaf_spine)


def test_spines_reaching_every_leaf_go_to_three_tiers_at_16_sus():
    """The single spine tier ends at 128 leaves (the SN5600's 128 x 400G): 16 SUs' 256 leaves need cores."""
    assert data_dims(scaled(b300_ethernet_su(), 16)).tiers == 3


def test_a_spine_group_per_rail_does_not_reproduce_the_small_rows():
    """One group per rail gives each rail at least min_spines (2) spines: 32 at 1 SU against the published 8.
    The twin-plane reading (two groups) is the one that fits every row."""
    per_rail = {sus: data_dims(scaled(b300_ethernet_su(spine_groups=16), sus)).spines
                for sus in B300_ETHERNET_PUBLISHED}
    assert per_rail == {1: 32, 2: 32, 4: 32, 8: 64, 16: 128}  # published: 8, 16, 32, 64, 128


def test_twin_plane_16_sus_is_two_disjoint_fabrics():
    """At 16 SUs each spine takes one link from each of its plane's 128 leaves (all 128 ports) and none
    from the other plane's; every check of the finished plan passes (reachability within a plane)."""
    plan = plan_cluster(scaled(b300_ethernet_su(spine_groups=2), 16))
    rail = {d.name: d.rail for d in plan.devices if d.plane == "data" and d.kind == "leaf"}
    below: dict[str, list[int]] = {}
    for link in plan.links:
        if link.tier == LinkTier.DATA_LEAF_SPINE:
            below.setdefault(link.b.device, []).append(rail[link.a.device])
    assert len(below) == 128
    for spine, rails in below.items():
        group = (int(spine.rsplit("-", 1)[1]) - 1) // 64  # spine-01..64: rails 0-7; spine-65..128: rails 8-15
        assert len(rails) == 128 and {r // 8 for r in rails} == {group}, spine
    assert check_fabric(plan) == []


def test_gb200_nvl72_su_compute_fabric_is_what_the_ra_makes_derivable():
    """The DGX SuperPOD GB200 RA publishes no leaf/spine/cable table (docs/hardware.md says what was
    searched); what it does state is checked: an SU of 8 racks x 72 GPUs, one NDR 400G compute NIC per GPU
    (4 per tray, a rail each), QM9700 (64 ports) leaves rail-optimized and non-blocking. So 576 node-leaf
    links; per rail 144 trays on ceil(144 / 32) = 5 leaves of 32 node ports and 32 uplinks: 20 leaves,
    640 leaf-spine links."""
    spec = load_cluster(REPO / "inventory" / "gb200-nvl72-su.yaml")[0]
    plan = plan_cluster(spec)
    leaves, _, cores, node_leaf, leaf_spine, _ = _counts(plan)
    assert plan.summary.gpus == 8 * 72 == node_leaf
    assert (leaves, cores, leaf_spine, plan.fabric["data"].tiers) == (4 * 5, 0, 4 * 5 * 32, 2)
    rail = {d.name: d.rail for d in plan.devices if d.plane == "data" and d.kind == "leaf"}
    by_tray: dict[str, list[int]] = {}
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    for link in plan.links:
        if link.plane == "data" and link.tier == LinkTier.NODE_LEAF:
            by_tray.setdefault(link.a.device, []).append(rail[link.b.device])
            down[link.b.device] += 1
        elif link.tier == LinkTier.DATA_LEAF_SPINE:
            up[link.a.device] += 1
    assert len(by_tray) == 144 and all(sorted(rails) == [0, 1, 2, 3] for rails in by_tray.values())
    assert max(down.values()) == 32 and set(up.values()) == {32}  # 1:1 at 64 ports
    assert plan.fabric["data"].oversubscription["leaf"] <= 1.0
