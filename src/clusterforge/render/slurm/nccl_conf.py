"""/etc/nccl.conf per GPU server (plan/nccl.py): NCCL's system-wide settings, ``NAME=value`` lines."""

from __future__ import annotations

from clusterforge.plan.nccl import NcclHost
from clusterforge.vocab import Transport

__all__ = ["nccl_conf"]


def nccl_conf(cluster: str, host: NcclHost) -> str:
    lines = [f"# {cluster}: /etc/nccl.conf of {host.host}, rendered by clusterforge from the plan"]
    if host.transport == Transport.ROCE:
        lines.append("# RoCE: traffic class = the lossless RoCE ToS byte (DSCP << 2 | ECT)")
    if host.transport != Transport.ETHERNET and not host.hca:
        lines.append("# NCCL_IB_HCA unset: the catalog names no RDMA devices for this server model"
                     " (nics.data.rdma_devices); NCCL uses every active HCA")
    if host.transport == Transport.ROCE and host.gid_index is None:
        lines.append("# NCCL_IB_GID_INDEX unset: NCCL 2.21+ picks the RoCE v2 GID of the address family itself")
    lines += [f"{name}={value}" for name, value in host.settings()]
    return "\n".join(lines) + "\n"
