"""Slurm from the plan: controllers, nodes, partitions, accounts and which topology plugin, as frozen records.

Pure: the declaration's ``slurm:``/``schedulers``/``teams``/``software.slurm_version``, the planned devices,
the catalog's CPU/memory/GPU facts and the scheduler topology (plan/topology.py) in, one ``SlurmPlan`` out
(None when Slurm is not among the schedulers). The renderers (render/slurm/) format it; nothing re-derives it.

* controllers: the control nodes in order; the first runs slurmctld (primary) and slurmdbd, the others are
  backup controllers. Every address is the node's management address.
* nodes: every GPU server; Sockets/CoresPerSocket/ThreadsPerCore and RealMemory (``real_memory_pct`` of the
  installed GiB, in MiB) from the catalog, Gres ``gpu:<type>:<count>`` with the type the first word of the
  catalog's GPU model in lower case (``H100-SXM5-80GB`` -> ``h100``). With AutoDetect the type must match or
  be a substring of what NVML reports (gres.conf(5)), which Slurm spells as NVML's device name in lower case
  with '_' for spaces (``NVIDIA H100 80GB HBM3`` -> ``nvidia_h100_80gb_hbm3``: _nvml_get_device_name in
  src/plugins/gpu/nvml/gpu_nvml.c at tag slurm-22-05-8-1); the first word is in it.
  ``hardware: simulated`` (the lab): one core and 512 MiB per node, GPUs as placeholder files (render/slurm/
  node_files.py), catalog figures kept.
* partitions: as declared (the first is the default when none says so), else one per SU, the first default.
* accounts: one per team, GrpTRES=gres/gpu=<the team's GPUs>.
* topology: topology/block (one block per NVLink domain) where the plan has NVLink domains and the Slurm
  version has the plugin (23.11, from SchedMD's CHANGELOG/slurm-23.11.md and doc/man/man5/topology.conf.5
  at tag slurm-23-11-0-1; ``BlockSizes`` replaced ``BlockLevels`` in 24.05, CHANGELOG/slurm-24.05.md),
  else topology/tree where the data fabric gives one, else none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from clusterforge.model import ClusterSpec
from clusterforge.model.cluster import Loc
from clusterforge.model.slurm_checks import gres_type, slurm_version
from clusterforge.plan.errors import PlanError
from clusterforge.plan.naming import su_label
from clusterforge.plan.nccl import NcclHost, plan_nccl
from clusterforge.plan.objects import Device
from clusterforge.plan.records import HostRoce
from clusterforge.plan.topology import SchedulerTopology
from clusterforge.vocab import DeviceKind

__all__ = ["SlurmController", "SlurmNode", "SlurmPartitionPlan", "SlurmAccount", "SlurmPlan", "plan_slurm",
           "gres_type", "BLOCK_FROM", "BLOCK_SIZES_FROM", "SIMULATED_MEMORY_MB"]

BLOCK_FROM = (23, 11)  # topology/block
BLOCK_SIZES_FROM = (24, 5)  # BlockSizes= (23.11 had BlockLevels=)
SIMULATED_MEMORY_MB = 512


@dataclass(frozen=True, slots=True)
class SlurmController:
    name: str
    address: str


@dataclass(frozen=True, slots=True)
class SlurmNode:
    name: str
    address: str
    su: int | None
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    real_memory_mb: int
    gpus: int
    gpu_type: str
    catalog_shape: str  # the catalog's figures, for the comment beside a simulated node's line

    @property
    def gres(self) -> str:
        return f"gpu:{self.gpu_type}:{self.gpus}" if self.gpus else ""


@dataclass(frozen=True, slots=True)
class SlurmPartitionPlan:
    name: str
    nodes: tuple[str, ...]
    default: bool
    max_time: str
    default_time: str | None


@dataclass(frozen=True, slots=True)
class SlurmAccount:
    name: str
    gpus: int

    @property
    def grp_tres(self) -> str:
        return f"gres/gpu={self.gpus}"


@dataclass(frozen=True, slots=True)
class SlurmPlan:
    version: str
    cluster_name: str
    controllers: tuple[SlurmController, ...]
    nodes: tuple[SlurmNode, ...]
    partitions: tuple[SlurmPartitionPlan, ...]
    accounts: tuple[SlurmAccount, ...]
    gpu_detection: str  # files | nvml
    simulated: bool
    topology_plugin: str | None  # topology/tree | topology/block | None
    block_sizes: bool  # write BlockSizes= (24.05+)
    nccl: tuple[NcclHost, ...] = ()  # per GPU server (plan/nccl.py)

    @property
    def accounting_host(self) -> SlurmController:
        return self.controllers[0]

    @property
    def version_tuple(self) -> tuple[int, int]:
        return slurm_version(self.version)


def _nodes(spec: ClusterSpec, servers: list[Device]) -> tuple[SlurmNode, ...]:
    pct = spec.slurm.real_memory_pct
    simulated = spec.slurm.hardware == "simulated"
    out = []
    for device in servers:
        model = spec.catalog.servers[device.model]
        cpu, memory_gb = model.cpu, model.memory_gb
        assert cpu is not None and memory_gb is not None  # model/slurm_checks refuses a model without them
        real_mb = memory_gb * 1024 * pct // 100
        shape = (f"catalog: {cpu.sockets} x {cpu.cores_per_socket} cores x {cpu.threads_per_core} threads,"
                 f" {memory_gb} GiB, {device.gpus} x {model.gpu.model}")
        if simulated:
            out.append(SlurmNode(device.name, device.management_ip or "", device.su, 1, 1, 1, SIMULATED_MEMORY_MB,
                                 device.gpus, gres_type(model.gpu.model), shape))
        else:
            out.append(SlurmNode(device.name, device.management_ip or "", device.su, cpu.sockets,
                                 cpu.cores_per_socket, cpu.threads_per_core, real_mb, device.gpus,
                                 gres_type(model.gpu.model), shape))
    return tuple(out)


def _partitions(spec: ClusterSpec, nodes: tuple[SlurmNode, ...]) -> tuple[SlurmPartitionPlan, ...]:
    names = [node.name for node in nodes]
    if not spec.slurm.partitions:
        sus = sorted({node.su for node in nodes if node.su is not None})
        return tuple(SlurmPartitionPlan(su_label(su), tuple(n.name for n in nodes if n.su == su), i == 0,
                                        "INFINITE", None) for i, su in enumerate(sus))
    known = set(names)
    problems: list[tuple[Loc, str]] = []
    out = []
    any_default = any(p.default for p in spec.slurm.partitions)
    for index, part in enumerate(spec.slurm.partitions):
        for i, name in enumerate(part.nodes):
            if name not in known:
                problems.append((("slurm", "partitions", index, "nodes", i),
                                 f"{name!r} is not a planned GPU server (Slurm nodes: {_sample(names)})"))
        wanted = set(part.nodes) | {n.name for n in nodes if n.su in set(part.sus)}
        members = tuple(n for n in names if n in wanted) if (part.sus or part.nodes) else tuple(names)
        if not members and not problems:
            problems.append((("slurm", "partitions", index, "sus"), f"partition {part.name!r} has no nodes"))
        out.append(SlurmPartitionPlan(part.name, members, part.default or (not any_default and index == 0),
                                      part.max_time, part.default_time))
    if problems:
        raise PlanError(problems)
    return tuple(out)


def _sample(names: list[str]) -> str:
    return ", ".join(names[:6]) + (f", ... ({len(names)} in all)" if len(names) > 6 else "")


def _topology(spec: ClusterSpec, topology: SchedulerTopology | None) -> tuple[str | None, bool]:
    version = slurm_version(spec.software.slurm_version)
    if topology is not None and topology.blocks and version >= BLOCK_FROM:
        return "topology/block", version >= BLOCK_SIZES_FROM
    if topology is not None and topology.tree:
        return "topology/tree", False
    return None, False


def plan_slurm(spec: ClusterSpec, devices: Iterable[Device], topology: SchedulerTopology | None,
               roce: HostRoce) -> SlurmPlan | None:
    if "slurm" not in spec.schedulers:
        return None
    devices = list(devices)
    controllers = tuple(SlurmController(d.name, d.management_ip or "") for d in devices
                        if d.kind == DeviceKind.CONTROL)
    servers = [d for d in devices if d.kind == DeviceKind.SERVER]
    nodes = _nodes(spec, servers)
    accounts = tuple(SlurmAccount(team.name, team.gpus) for team in spec.teams)
    plugin, block_sizes = _topology(spec, topology)
    return SlurmPlan(version=spec.software.slurm_version, cluster_name=spec.slurm.cluster_name or spec.name,
                     controllers=controllers, nodes=nodes, partitions=_partitions(spec, nodes), accounts=accounts,
                     gpu_detection=spec.slurm.gpu_detection, simulated=spec.slurm.hardware == "simulated",
                     topology_plugin=plugin, block_sizes=block_sizes, nccl=plan_nccl(spec, servers, roce))
