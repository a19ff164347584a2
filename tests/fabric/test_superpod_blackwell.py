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
  leaf-spine cables for 1-16 SUs. A cable there is one 800G port carrying two 400G links, so the plan's
  400G links are twice the published cables. Its 16-SU row (256 leaves, 128 spines, no cores) joins
  each spine to one rail group's leaves only; the planner's spines reach every leaf, so that row is
  not reproduced (the plan goes to three tiers) and is not tested.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from clusterforge.model import ClusterSpec, load_cluster
from clusterforge.model.scale import scaled
from clusterforge.plan import plan_cluster
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
}


@cache
def b300_ethernet_su() -> ClusterSpec:
    """The B300 Ethernet RA's SU: 64 DGX B300 (4 per rack, 16 racks), each ConnectX-8 two 400GbE planes (16
    rails), on SN5600s broken out 2 x 400G (128 ports; a test model without a SONiC port map, so Cumulus)."""
    data = b300_xdr_su().model_dump()
    data["envelope"].update(max_nodes_per_su=64, max_racks_per_su=16, max_rails=16)
    data["scalable_units"] = [{**data["scalable_units"][0], "server_model": "dgx-b300-eth", "nodes": 64,
                               "racks": 16, "nodes_per_rack": 4}]
    switches = data["catalog"]["switches"]
    switches["sn5600-2x400"] = {**switches["sn5600"], "ports": 128, "speed_gbps": 400, "lanes_per_port": 4,
                                "sonic": None, "source": "test only: SN5600 in 2 x 400G breakout"}
    data["networks"]["data"].update(transport="roce", nos="cumulus", mtu=9000, leaf_model="sn5600-2x400",
                                    spine_model="sn5600-2x400")
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


@pytest.mark.parametrize("sus", sorted(B300_ETHERNET_PUBLISHED))
def test_dgx_b300_ethernet_superpod_counts(sus):
    plan = plan_cluster(scaled(b300_ethernet_su(), sus))
    leaves, spines, cores, node_leaf, leaf_spine, _ = _counts(plan)
    published = B300_ETHERNET_PUBLISHED[sus]
    assert (leaves, spines, cores) == (*published[:2], 0)
    assert (node_leaf, leaf_spine) == (2 * published[2], 2 * published[3])  # two 400G links per 800G cable
