"""Synthetic lab topologies and a leftover check, shared by the lab tests and benchmarks/lab_up.py."""

from __future__ import annotations

import json
import subprocess

from clusterforge.lab import (
    LabHost,
    LabInterface,
    LabRoute,
    LabSegment,
    LabTopology,
    missing_prerequisites,
    names,
    overlay,
)
from clusterforge.lab.util import lab_dir

LAB = "cftest"


def _frr(name: str, asn: int, router_id: str, neighbors: dict[str, int]) -> str:
    lines = ["frr defaults datacenter", f"hostname {name}", "!", f"router bgp {asn}", f" bgp router-id {router_id}",
             " no bgp ebgp-requires-policy"]  # fmt: skip
    lines += [f" neighbor {ip} remote-as {peer_as}" for ip, peer_as in neighbors.items()]
    return "\n".join(lines + ["!", "line vty", "!", ""])


def small_topology(name: str = LAB) -> LabTopology:
    """The lab the tests run against (the shape lab.from_plan produces, small):

    * srv1..3 on the management bridge (MTU 1500) with the control address .254
    * srv2, srv3 on a jumbo storage bridge (MTU 9000, VLAN 20 planned)
    * srv1 <-> rtr1 p2p data link (MTU 9000) and a data route on srv1; srv2 defaults via control
    * rtr1 (FRR) on the oob bridge only, reached there through a ``control_extra`` address
    * rtr2 (FRR) with no address this machine reaches: a p2p link to rtr1 (BGP peer) only
    """
    mgmt = lambda i: LabInterface(name="mgmt0", segment="mgmt", ip=f"198.19.24.{i}/24", mtu=1500)  # noqa: E731
    return LabTopology(
        name=name,
        segments=[
            LabSegment(name="mgmt", kind="bridge", mtu=1500),
            LabSegment(name="oob", kind="bridge", mtu=1500),
            LabSegment(name="data-rtr1-srv1", kind="p2p", mtu=9000),
            LabSegment(name="fabric-rtr1-rtr2", kind="p2p", mtu=9000),
            LabSegment(name="storage", kind="bridge", mtu=9000),
        ],
        hosts=[
            LabHost(
                name="srv1",
                interfaces=[
                    mgmt(11),
                    LabInterface(name="rail0", segment="data-rtr1-srv1", ip="198.19.16.1/31", mtu=9000),
                ],
                routes=[LabRoute(dst="198.19.16.0/22", via="198.19.16.0", dev="rail0", metric=100)],
            ),
            LabHost(
                name="srv2",
                interfaces=[
                    mgmt(12),
                    LabInterface(name="stor0", segment="storage", ip="198.19.28.12/24", mtu=9000, vlan=20),
                ],
                routes=[LabRoute(dst="default", via="198.19.24.254", dev="mgmt0")],
            ),
            LabHost(
                name="srv3",
                interfaces=[
                    mgmt(13),
                    LabInterface(name="stor0", segment="storage", ip="198.19.28.13/24", mtu=9000, vlan=20),
                ],
            ),
            LabHost(
                name="rtr1",
                kind="router",
                interfaces=[
                    LabInterface(name="eth0", segment="oob", ip="198.19.30.1/24"),
                    LabInterface(name="swp1", segment="data-rtr1-srv1", ip="198.19.16.0/31", mtu=9000),
                    LabInterface(name="swp2", segment="fabric-rtr1-rtr2", ip="198.19.20.0/31", mtu=9000),
                ],
                frr_conf=_frr("rtr1", 65100, "198.19.21.1", {"198.19.16.1": 65101, "198.19.20.1": 65200}),
            ),
            LabHost(
                name="rtr2",
                kind="router",
                interfaces=[LabInterface(name="swp1", segment="fabric-rtr1-rtr2", ip="198.19.20.1/31", mtu=9000)],
                frr_conf=_frr("rtr2", 65200, "198.19.21.2", {"198.19.20.0": 65100}),
            ),
        ],
        control=LabInterface(segment="mgmt", ip="198.19.24.254/24"),
        control_extra=("198.19.30.254/24",),
    )


def skip_reason(why: list[str] | None = None) -> str | None:
    """Why the lab tests cannot run here (None when they can)."""
    why = missing_prerequisites() if why is None else why
    if not why:
        return None
    return "lab tests need root, debootstrap, systemd-nspawn and overlayfs; here: " + ", ".join(why)


def leftovers(lab: str) -> dict[str, list[str]]:
    """Everything of ``lab`` still on this machine (empty lists when clean)."""
    ns = [n for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
          if n.startswith(names.netns_prefix(lab))]  # fmt: skip
    out = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True).stdout
    links = [link["ifname"] for link in json.loads(out or "[]") if link["ifname"].startswith(names.link_prefix(lab))]
    mounts = [str(p) for p in overlay.mounts_under(lab_dir(lab))]
    dirs = [str(lab_dir(lab))] if lab_dir(lab).exists() else []
    return {"netns": ns, "links": links, "mounts": mounts, "dirs": dirs}
