"""The storage section: each storage server with its storage-plane address, and each declared tier with
its file system, mount, layout (GlusterFS volumes: bricks, replica) and declared client throughput."""

from __future__ import annotations

from typing import Any

from clusterforge.plan.objects import Plan
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["storage_view"]


def storage_view(plan: Plan) -> dict[str, Any]:
    storage = plan.services.storage
    volumes = {v["tier"]: v for v in storage.volumes}
    servers = []
    for device in plan.devices:
        if device.kind != DeviceKind.STORAGE:
            continue
        address = next((i.ip for i in device.interfaces if i.plane == Plane.STORAGE and i.ip), None)
        bricks = [f"{v['name']}:{b['path']}" for v in volumes.values() for b in v["bricks"]
                  if b["server"] == device.name]
        servers.append({"name": device.name, "rack": device.rack, "model": device.model, "address": address,
                        "bricks": bricks})
    tiers = []
    for mount in storage.mounts:
        volume = volumes.get(mount.tier)
        tiers.append({
            "tier": mount.tier, "kind": storage.kind, "path": mount.path, "source": mount.source or "–",
            "options": mount.options,
            "layout": (f"{volume['layout']} ({len(volume['bricks'])} bricks, replica {volume['replica']})"
                       if volume else "–"),
            "capacity_tb": volume["capacity_tb"] if volume else None, "media": volume["media"] if volume else None,
            "throughput_mbps": mount.throughput_mbps,
        })  # fmt: skip
    return {"kind": storage.kind, "servers": servers, "tiers": tiers}
