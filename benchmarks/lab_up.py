#!/usr/bin/env python3
"""Time lab up/down for growing host counts, with a cold and a cached rootfs.

    sudo .venv/bin/python benchmarks/lab_up.py                 # 4, 8, 16 hosts, cached rootfs
    sudo .venv/bin/python benchmarks/lab_up.py --cold          # first rebuild the rootfs from nothing
    sudo .venv/bin/python benchmarks/lab_up.py --sizes 4 32

Each lab is one FRR router plus N-1 servers: every server on the management bridge
(MTU 1500) and a storage bridge (MTU 9000), plus a p2p data link (MTU 9000) to the router.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from clusterforge.lab import (  # noqa: E402
    LabHost,
    LabInterface,
    LabSegment,
    LabTopology,
    down,
    ensure_rootfs,
    missing_prerequisites,
    status,
    up,
)
from clusterforge.lab import rootfs as rootfs_mod  # noqa: E402


def scaled_topology(n: int, name: str) -> LabTopology:
    servers = [f"srv{i:02d}" for i in range(1, n)]
    segs = [LabSegment(name="mgmt", mtu=1500), LabSegment(name="storage", mtu=9000)]
    hosts = []
    rtr_ifs = [LabInterface(name="mgmt0", segment="mgmt", ip="198.18.8.1/24")]
    bgp = ["frr defaults datacenter", "hostname rtr1", "router bgp 65000", " no bgp ebgp-requires-policy"]
    for i, s in enumerate(servers, start=1):
        seg = f"data-{s}"
        segs.append(LabSegment(name=seg, kind="p2p", mtu=9000))
        rtr_ifs.append(LabInterface(name=f"swp{i}", segment=seg, ip=f"198.18.0.{2 * i}/31", mtu=9000))
        bgp.append(f" neighbor 198.18.0.{2 * i + 1} remote-as {65000 + i}")
        hosts.append(
            LabHost(
                name=s,
                interfaces=[
                    LabInterface(name="mgmt0", segment="mgmt", ip=f"198.18.8.{10 + i}/24"),
                    LabInterface(name="stor0", segment="storage", ip=f"198.18.12.{10 + i}/24", mtu=9000),
                    LabInterface(name="rail0", segment=seg, ip=f"198.18.0.{2 * i + 1}/31", mtu=9000),
                ],
            )
        )
    hosts.append(LabHost(name="rtr1", kind="router", interfaces=rtr_ifs, frr_conf="\n".join(bgp) + "\n"))
    return LabTopology(
        name=name, hosts=hosts, segments=segs, control=LabInterface(segment="mgmt", ip="198.18.8.254/24")
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16])
    ap.add_argument("--cold", action="store_true", help="rebuild the rootfs from scratch (deb cache too)")
    ap.add_argument("--name", default="cfbench")
    args = ap.parse_args()
    why = missing_prerequisites()
    if why:
        print("cannot run the lab here:", ", ".join(why), file=sys.stderr)
        return 2
    rows = []
    if args.cold:
        shutil.rmtree(rootfs_mod.deb_cache_path(), ignore_errors=True)
        t = time.monotonic()
        ensure_rootfs(force=True)
        rows.append(("rootfs cold build (debootstrap, no deb cache)", time.monotonic() - t))
    t = time.monotonic()
    ensure_rootfs()
    rows.append(("rootfs cached check", time.monotonic() - t))
    for n in args.sizes:
        topo = scaled_topology(n, args.name)
        down(topo.name)  # clean slate
        try:
            t = time.monotonic()
            up(topo)
            t_up = time.monotonic() - t
            assert all(r.state == "running" and r.sshd for r in status(topo)), "not every host is up"
            t = time.monotonic()
            again = up(topo)
            t_again = time.monotonic() - t
            assert not again.changed
        finally:
            t = time.monotonic()
            down(topo.name)
            t_down = time.monotonic() - t
        rows += [
            (f"{n:3d} hosts: up (cached rootfs, until every sshd answers)", t_up),
            (f"{n:3d} hosts: second up (no change)", t_again),
            (f"{n:3d} hosts: down", t_down),
        ]
    width = max(len(r[0]) for r in rows)
    for label, secs in rows:
        print(f"{label:<{width}}  {secs:7.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
