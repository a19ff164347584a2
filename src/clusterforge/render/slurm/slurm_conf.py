"""slurm.conf from the SlurmPlan (plan/slurm.py): one file for the controllers and every node.

Written for Slurm 22.05 (Debian 12's slurm-wlm) and later: munge authentication, cons_tres selection of
cores and memory with GPUs as GRES, cgroup process tracking and task containment, accounting through
slurmdbd on the first control node (its management address), limits enforced from the associations
(the teams' GrpTRES), the topology plugin the plan chose. Paths are Debian's package defaults
(/var/lib/slurm, /var/log/slurm, /run/*.pid, as its systemd units expect).
"""

from __future__ import annotations

from clusterforge.plan.slurm import SlurmPlan
from clusterforge.render.scheduler import hostlist

__all__ = ["slurm_conf", "SLURMCTLD_PORT", "SLURMD_PORT", "SLURMDBD_PORT"]

SLURMCTLD_PORT = 6817
SLURMD_PORT = 6818
SLURMDBD_PORT = 6819


def _daemons(slurm: SlurmPlan) -> list[str]:
    lines = [f"ClusterName={slurm.cluster_name}"]
    lines += [f"SlurmctldHost={c.name}({c.address})" for c in slurm.controllers]
    lines += [
        "SlurmUser=slurm",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"SlurmctldPort={SLURMCTLD_PORT}",
        f"SlurmdPort={SLURMD_PORT}",
        "StateSaveLocation=/var/lib/slurm/slurmctld",
        "SlurmdSpoolDir=/var/lib/slurm/slurmd",
        "SlurmctldPidFile=/run/slurmctld.pid",
        "SlurmdPidFile=/run/slurmd.pid",
        "SlurmctldLogFile=/var/log/slurm/slurmctld.log",
        "SlurmdLogFile=/var/log/slurm/slurmd.log",
        "ReturnToService=2",
        "MpiDefault=none",
    ]
    return lines


def _resources(slurm: SlurmPlan) -> list[str]:
    lines = [
        "",
        "# scheduling: cores and memory are consumable, GPUs are GRES; cgroups track and contain jobs",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "GresTypes=gpu",
        "ProctrackType=proctrack/cgroup",
        "TaskPlugin=task/cgroup,task/affinity",
        "JobAcctGatherType=jobacct_gather/cgroup",
    ]
    if slurm.topology_plugin:
        lines.append(f"TopologyPlugin={slurm.topology_plugin}")
    accounting = slurm.accounting_host
    lines += [
        "",
        f"# accounting: slurmdbd on {accounting.name}; team GPU limits (GrpTRES) are enforced",
        "AccountingStorageType=accounting_storage/slurmdbd",
        f"AccountingStorageHost={accounting.address}",
        f"AccountingStoragePort={SLURMDBD_PORT}",
        "AccountingStorageTRES=gres/gpu",
        "AccountingStorageEnforce=associations,limits,safe",
        "JobCompType=jobcomp/none",
    ]
    return lines


def _nodes(slurm: SlurmPlan) -> list[str]:
    lines = ["", "# nodes: every GPU server, CPU topology and memory from the catalog"]
    if slurm.simulated:
        lines.append("# SIMULATED hardware (the lab): containers without GPUs on a small machine, so each node is"
                     " given one core and 512 MB and its GPUs are placeholder files (gres.conf); the catalog's"
                     " figures are in the comment above each line")
    for node in slurm.nodes:
        if slurm.simulated:
            lines.append(f"# {node.name}: {node.catalog_shape}")
        parts = [f"NodeName={node.name}", f"NodeAddr={node.address}", f"Sockets={node.sockets}",
                 f"CoresPerSocket={node.cores_per_socket}", f"ThreadsPerCore={node.threads_per_core}",
                 f"RealMemory={node.real_memory_mb}"]
        if node.gres:
            parts.append(f"Gres={node.gres}")
        parts.append("State=UNKNOWN")
        lines.append(" ".join(parts))
    return lines


def _partitions(slurm: SlurmPlan) -> list[str]:
    lines = ["", "# partitions"]
    for part in slurm.partitions:
        parts = [f"PartitionName={part.name}", f"Nodes={hostlist(part.nodes)}",
                 f"Default={'YES' if part.default else 'NO'}", f"MaxTime={part.max_time}"]
        if part.default_time:
            parts.append(f"DefaultTime={part.default_time}")
        parts.append("State=UP")
        lines.append(" ".join(parts))
    return lines


def slurm_conf(cluster: str, slurm: SlurmPlan) -> str:
    header = [f"# {cluster}: slurm.conf rendered by clusterforge from the plan (Slurm {slurm.version}). Do not edit:",
              "# change the inventory declaration. Install as /etc/slurm/slurm.conf on the controllers and"
              " every node."]
    lines = header + _daemons(slurm) + _resources(slurm) + _nodes(slurm) + _partitions(slurm)
    return "\n".join(lines) + "\n"
