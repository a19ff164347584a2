"""Synthetic lab topologies and a leftover check, shared by the lab tests and benchmarks/lab_up.py."""

from __future__ import annotations

import json
import subprocess

from clusterforge.lab import LabHost, LabInterface, LabSegment, LabTopology, names, overlay
from clusterforge.lab.util import lab_dir

LAB = "cftest"

FRR_CONF = """\
frr defaults datacenter
hostname rtr1
!
router bgp 65100
 bgp router-id 198.18.8.1
 no bgp ebgp-requires-policy
 neighbor 198.18.0.1 remote-as 65101
!
line vty
!
"""


def small_topology(name: str = LAB) -> LabTopology:
    """3 servers + 1 router on a management bridge; one p2p data link (MTU 9000) server↔router;
    a VLAN-tagged jumbo storage bridge between two servers."""
    mgmt = lambda i: LabInterface(name="mgmt0", segment="mgmt", ip=f"198.18.8.{i}/24", mtu=1500)  # noqa: E731
    return LabTopology(
        name=name,
        segments=[
            LabSegment(name="mgmt", kind="bridge", mtu=1500),
            LabSegment(name="data-rtr1-srv1", kind="p2p", mtu=9000),
            LabSegment(name="storage", kind="bridge", mtu=9000),
        ],
        hosts=[
            LabHost(
                name="srv1",
                interfaces=[
                    mgmt(11),
                    LabInterface(name="rail0", segment="data-rtr1-srv1", ip="198.18.0.1/31", mtu=9000),
                ],
            ),
            LabHost(
                name="srv2",
                interfaces=[
                    mgmt(12),
                    LabInterface(name="stor0", segment="storage", ip="198.18.12.12/24", mtu=9000, vlan=20),
                ],
            ),
            LabHost(
                name="srv3",
                interfaces=[
                    mgmt(13),
                    LabInterface(name="stor0", segment="storage", ip="198.18.12.13/24", mtu=9000, vlan=20),
                ],
            ),
            LabHost(
                name="rtr1",
                kind="router",
                interfaces=[
                    mgmt(1),
                    LabInterface(name="swp1", segment="data-rtr1-srv1", ip="198.18.0.0/31", mtu=9000),
                ],
                frr_conf=FRR_CONF,
            ),
        ],
        control=LabInterface(segment="mgmt", ip="198.18.8.254/24"),
    )


def leftovers(lab: str) -> dict[str, list[str]]:
    """Everything of ``lab`` still on this machine (empty lists when clean)."""
    ns = [n for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
          if n.startswith(names.netns_prefix(lab))]  # fmt: skip
    out = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True).stdout
    links = [link["ifname"] for link in json.loads(out or "[]") if link["ifname"].startswith(names.link_prefix(lab))]
    mounts = [str(p) for p in overlay.mounts_under(lab_dir(lab))]
    dirs = [str(lab_dir(lab))] if lab_dir(lab).exists() else []
    return {"netns": ns, "links": links, "mounts": mounts, "dirs": dirs}
