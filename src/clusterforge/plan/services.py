"""Cluster services the hosts consume: storage mounts, pinned software, team GPU quotas."""

from __future__ import annotations

from clusterforge.model import ClusterSpec
from clusterforge.plan.objects import Device
from clusterforge.plan.records import Services, StorageMount, StorageService, TeamQuota
from clusterforge.plan.volumes import plan_volumes, storage_address, storage_clients
from clusterforge.vocab import DeviceKind

__all__ = ["plan_services"]

# NFS is fine for home directories and cold data, not as the main training-data store.
NFS_TRAINING_WARNING = "NFS tier {tier!r} is marked for training data; use a parallel file system instead"


def plan_services(spec: ClusterSpec, devices: list[Device]) -> tuple[Services, list[str]]:
    st = spec.storage
    servers = [d for d in devices if d.kind == DeviceKind.STORAGE]
    volumes, warnings = plan_volumes(spec, devices)
    mounts = []
    for index, tier in enumerate(st.tiers):
        if servers:
            server = servers[index % len(servers)]
            address = storage_address(server)
        else:
            address = None
        if st.kind == "nfs" and tier.training_data:
            warnings.append(NFS_TRAINING_WARNING.format(tier=tier.name))
        source = {
            "nfs": f"{address}:{tier.export}", "lustre": f"{address}@tcp:/{tier.name}",
            "beegfs": "beegfs_nodev", "gpfs": tier.name, "weka": f"{address}/{tier.name}",
            "glusterfs": f"{address}:/{tier.name}",
        }[st.kind] if address or st.kind in ("beegfs", "gpfs") else None
        options = tier.options
        if st.kind == "glusterfs" and len(servers) > 1:
            # the volume file comes from the first server; the others answer when it is down
            backups = ":".join(storage_address(s) for s in servers if s is not server)
            options = f"{options},backup-volfile-servers={backups}"
        mounts.append(StorageMount(tier.name, source, tier.mount, tier.export, options, tier.training_data,
                                   server.name if servers else None, tier.throughput_mbps))
    teams = tuple(TeamQuota(team.name, team.gpus) for team in spec.teams)
    total_gpus = sum(d.gpus for d in devices)
    if sum(t.gpus for t in teams) > total_gpus:
        warnings.append(f"team GPU quotas ({sum(t.gpus for t in teams)}) exceed the cluster's {total_gpus} GPUs")
    clients = tuple(storage_clients(spec.networks.storage.supernet)) if volumes else ()
    storage = StorageService(st.kind, tuple(mounts), st.local_nvme_cache, tuple(volumes), clients)
    # Software's fields are flat text: its items as they are (model_dump would build a serializer for it alone)
    software = {name: value for name, value in spec.software if name != "slurm_version"}
    return Services(storage, software, teams), warnings
