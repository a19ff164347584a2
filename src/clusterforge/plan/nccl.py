"""NCCL's system settings per GPU server (/etc/nccl.conf), from the data plane and the host RoCE intent.

* ``NCCL_SOCKET_IFNAME``: the management interface (NCCL's bootstrap and socket traffic), exact match;
* ``NCCL_IB_HCA``: the RDMA devices of the data ports in rail order, exact match, port 1, where the
  catalog names them (``nics.data.rdma_devices``); else unset (NCCL takes every active HCA) and said so;
* RoCE planes: ``NCCL_IB_TC`` = the RoCE ToS byte (DSCP << 2 | ECT(0), plan/qos.host_roce), so NCCL's
  queue pairs carry the lossless class the switches map to the PFC priority; ``NCCL_IB_GID_INDEX=3``
  (the RoCE v2 IPv4 GID of mlx5 ports) before NCCL 2.21, from which NCCL picks the RoCE v2 GID of the
  address family itself (NCCL_IB_GID_INDEX default -1, src/transport/net_ib);
* plain Ethernet data planes: ``NCCL_IB_DISABLE=1`` and sockets over the data interfaces.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from clusterforge.model import ClusterSpec
from clusterforge.plan.objects import Device
from clusterforge.plan.records import HostRoce
from clusterforge.vocab import DeviceKind, Plane, Transport

__all__ = ["NcclHost", "plan_nccl", "AUTO_GID_FROM"]

AUTO_GID_FROM = (2, 21)
ROCE_V2_IPV4_GID_INDEX = 3


@dataclass(frozen=True, slots=True)
class NcclHost:
    host: str
    transport: str  # vocab.Transport of the data plane
    socket_ifname: str | None
    hca: tuple[str, ...]  # RDMA devices, rail order; () = not known
    data_interfaces: tuple[str, ...]
    traffic_class: int | None
    gid_index: int | None

    def settings(self) -> tuple[tuple[str, str], ...]:
        out: list[tuple[str, str]] = []
        if self.transport == Transport.ETHERNET:
            out.append(("NCCL_IB_DISABLE", "1"))
            if self.data_interfaces:
                out.append(("NCCL_SOCKET_IFNAME", "=" + ",".join(self.data_interfaces)))
            return tuple(out)
        if self.socket_ifname:
            out.append(("NCCL_SOCKET_IFNAME", f"={self.socket_ifname}"))
        if self.hca:
            out.append(("NCCL_IB_HCA", "=" + ",".join(f"{dev}:1" for dev in self.hca)))
        if self.traffic_class is not None:
            out.append(("NCCL_IB_TC", str(self.traffic_class)))
        if self.gid_index is not None:
            out.append(("NCCL_IB_GID_INDEX", str(self.gid_index)))
        return tuple(out)


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def plan_nccl(spec: ClusterSpec, devices: Iterable[Device], roce: HostRoce) -> tuple[NcclHost, ...]:
    transport = spec.networks.data.transport
    auto_gid = _version(spec.software.nccl_version) >= AUTO_GID_FROM
    out = []
    for device in devices:
        if device.kind != DeviceKind.SERVER:
            continue
        data = tuple(i.name for i in device.interfaces if i.plane == Plane.DATA)
        mgmt = next((i.name for i in device.interfaces if i.plane == Plane.MANAGEMENT), None)
        rdma = spec.catalog.servers[device.model].nics.data.rdma_devices or []
        hca = tuple(rdma[:len(data)]) if len(rdma) >= len(data) else ()
        is_roce = transport == Transport.ROCE and roce.enabled
        out.append(NcclHost(device.name, transport, mgmt, hca, data,
                            roce.roce_tos if is_roce else None,
                            ROCE_V2_IPV4_GID_INDEX if is_roce and not auto_gid else None))
    return tuple(out)
