"""A host's own routes, from the Plan: which interface takes the default route and which prefixes
go where. One rule, read by every output that models a host's routing table (the lab installs the
same routes; the Batfish host files carry them).

* default via the management gateway, on the management interface (the host's OS is reached and
  updated there; the BMC is another device, its oob gateway is not the host's);
* the storage pool via the storage gateway, on the storage bond;
* RoCE/Ethernet data: the data pool via each rail's leaf end of its /31, metric 100 + rail
  (rail 0 preferred, as the lab installs them); InfiniBand rails are on-link (no route).
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.plan.objects import Device, Plan
from clusterforge.vocab import Plane

__all__ = ["HostRoute", "host_routes", "DATA_METRIC_BASE"]

DATA_METRIC_BASE = 100


@dataclass(frozen=True, slots=True)
class HostRoute:
    dst: str  # "default" or a prefix
    via: str
    dev: str
    metric: int | None = None


def host_routes(plan: Plan, device: Device) -> tuple[HostRoute, ...]:
    out: list[HostRoute] = []
    for iface in device.interfaces:
        if iface.plane == Plane.MANAGEMENT and iface.gateway:
            out.append(HostRoute("default", iface.gateway, iface.name))
        elif iface.plane == Plane.STORAGE and iface.gateway:
            out.append(HostRoute(plan.pools[Plane.STORAGE]["pool"], iface.gateway, iface.name))
        elif iface.plane == Plane.DATA and iface.peer_ip:
            out.append(HostRoute(plan.pools[Plane.DATA]["pool"], iface.peer_ip, iface.name,
                                 DATA_METRIC_BASE + (iface.rail or 0)))
    return tuple(out)
