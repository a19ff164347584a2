"""GlusterFS volumes from the declared storage tiers: one volume per tier, bricks on the storage servers.

Pure function of the declaration and the planned storage servers. Facts used (GlusterFS 10
administration guide, "Setting up GlusterFS Volumes"): a volume's bricks are listed in order and
consecutive groups of ``replica`` bricks form one replica set; a volume whose brick count equals
its replica count is *replicate*, more bricks than that *distributed-replicate*, replica 1 is
*distribute*; glusterd refuses two bricks of one replica set on one server unless forced.

Bricks are ordered brick-major, server-minor (b1 on every server, then b2, ...), so a replica set
spans distinct servers whenever there are at least ``replicas`` servers.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from clusterforge.model import ClusterSpec
from clusterforge.plan.objects import Device
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["BRICK_ROOT", "plan_volumes", "storage_address", "storage_clients", "volume_layout"]

# Where bricks live on a storage server: a file system of its own that keeps trusted.* xattrs.
BRICK_ROOT = "/srv/bricks"
SHARED_SERVER_WARNING = (
    "glusterfs tier {tier!r}: replica set {index} has {replicas} bricks on {server} (only {servers} storage "
    "server(s)); its copies do not survive losing that server"
)


def volume_layout(replicas: int, bricks: int) -> str:
    if replicas == 1:
        return "distribute"
    return "replicate" if bricks == replicas else "distributed-replicate"


def storage_address(server: Device) -> str:
    return next(i.ip for i in server.interfaces if i.plane == Plane.STORAGE and i.ip).split("/")[0]


def storage_clients(supernet: str) -> list[str]:
    """auth.allow patterns for the volumes: the declared storage-plane supernet as GlusterFS address
    wildcards (``198.18.12.*``; the admin guide's auth.allow takes addresses with ``*``). The whole
    supernet, not the hosts planned today, so adding an SU changes no storage server's settings;
    the storage plane itself is where the fabric keeps other traffic out."""
    net = ipaddress.ip_network(supernet, strict=False)
    if net.version != 4:
        return []
    octets = -(-net.prefixlen // 8)  # the octets the prefix touches
    width = max(0, octets * 8 - net.prefixlen)
    base = int(net.network_address) >> (32 - octets * 8) if octets else 0
    patterns = []
    for n in range(1 << width) if octets else range(1):
        fixed = [str(((base + n) >> (8 * (octets - 1 - k))) & 0xFF) for k in range(octets)]
        patterns.append(".".join(fixed + ["*"] * (4 - octets)))
    return patterns


def plan_volumes(spec: ClusterSpec, devices: list[Device]) -> tuple[list[dict[str, Any]], list[str]]:
    """One volume per tier for kind glusterfs (none for other kinds); warnings for unsafe layouts."""
    st = spec.storage
    servers = [d for d in devices if d.kind == DeviceKind.STORAGE]
    if st.kind != "glusterfs" or not servers:
        return [], []
    volumes, warnings = [], []
    for tier in st.tiers:
        bricks = [
            {"server": server.name, "address": storage_address(server),
             "path": f"{BRICK_ROOT}/{tier.name}/b{b + 1}"}
            for b in range(tier.bricks_per_server)
            for server in servers
        ]  # fmt: skip
        force = False
        for index in range(0, len(bricks), tier.replicas):
            members = {b["server"] for b in bricks[index : index + tier.replicas]}
            if len(members) < tier.replicas:
                force = True
                warnings.append(SHARED_SERVER_WARNING.format(
                    tier=tier.name, index=index // tier.replicas + 1, replicas=tier.replicas,
                    server=", ".join(sorted(members)), servers=len(servers)))
        volumes.append({
            "name": tier.name, "tier": tier.name, "layout": volume_layout(tier.replicas, len(bricks)),
            "replica": tier.replicas, "transport": "tcp", "bricks": bricks, "force": force,
            "capacity_tb": tier.capacity_tb, "media": tier.media,
        })  # fmt: skip
    return volumes, warnings
