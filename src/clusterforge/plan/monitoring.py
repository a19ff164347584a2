"""Monitoring: what Prometheus scrapes, with which identity labels, where it runs and how much disk it needs.

Every host's node_exporter, dcgm-exporter on the GPU servers, the kube-apiservers on the control nodes and
the kubelets on the GPU servers (with Kubernetes among the schedulers), Kueue's metrics endpoint on the first
control node (where Kueue runs: the declaration's ``kubernetes.kueue``), cf-slurm-exporter on the Slurm
controllers (with Slurm: roles/slurm_controller's exporter of Slurm's own squeue, sinfo and sacct), and the
storage servers. Each target carries the Plan's identity of its host (host, rack, su, role); the renderer maps
each exporter's interface and GPU labels onto plane and rail, and Kueue's ClusterQueues and Slurm's accounts
onto the teams they are named after (``teams``).

Prometheus and Alertmanager run on one control node (``monitoring.host``, else the first), listening on its
management address. Disk is sized from a series estimate: Prometheus stores a sample in 1-2 bytes once
compacted (its storage documentation: needed_disk_space = retention_time_seconds x ingested_samples_per_second
x bytes_per_sample), so the plan takes 2 bytes and adds the write-ahead log and compaction's headroom.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from clusterforge.model import ClusterSpec
from clusterforge.plan.errors import PlanError
from clusterforge.plan.objects import Device
from clusterforge.plan.records import StorageMount
from clusterforge.vocab import DeviceKind, Plane

__all__ = [
    "ScrapeJob", "ScrapeTarget", "MonitoringPlan", "plan_monitoring", "DCGM_FIELDS", "PROMETHEUS_PORT",
    "ALERTMANAGER_PORT", "EXPORTER_PORTS", "SERIES_PER_TARGET",
]

PROMETHEUS_PORT = 9090
ALERTMANAGER_PORT = 9093


class ScrapeJob:
    """The scrape jobs, one per exporter kind (the ``job`` label every series carries)."""

    NODE = "node"
    DCGM = "dcgm"
    KUBE_APISERVER = "kube-apiserver"
    KUBELET = "kubelet"
    KUEUE = "kueue"
    SLURM = "slurm"
    PROMETHEUS = "prometheus"
    ALERTMANAGER = "alertmanager"
    ORDER = (NODE, DCGM, KUBE_APISERVER, KUBELET, KUEUE, SLURM, PROMETHEUS, ALERTMANAGER)


# Where each exporter listens: node_exporter's and dcgm-exporter's defaults (roles/node_exporter,
# roles/dcgm_exporter), kube-apiserver's secure port, the kubelet's, Kueue's metrics port (roles/k8s_kueue),
# cf-slurm-exporter's (roles/slurm_controller: the port prometheus-slurm-exporter uses, which it stands in for).
EXPORTER_PORTS = {
    ScrapeJob.NODE: 9100, ScrapeJob.DCGM: 9400, ScrapeJob.KUBE_APISERVER: 6443, ScrapeJob.KUBELET: 10250,
    ScrapeJob.KUEUE: 8443, ScrapeJob.SLURM: 8080, ScrapeJob.PROMETHEUS: PROMETHEUS_PORT,
    ScrapeJob.ALERTMANAGER: ALERTMANAGER_PORT,
}

# The DCGM fields roles/dcgm_exporter collects (its dcgm_exporter_metrics, in that order; a unit test keeps the
# two equal). The rules read only these; the estimate counts one series per field and GPU.
DCGM_FIELDS = (
    "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_POWER_MGMT_LIMIT",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES",
    "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_DEV_XID_ERRORS",
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
)

# Series per target, before the parts that grow with the host (an estimate: a node_exporter on a Debian
# server with the roles' collectors exposes several hundred; kube-apiserver's request histograms are the
# largest single source on a control node).
SERIES_PER_TARGET = {
    ScrapeJob.NODE: 800, ScrapeJob.DCGM: 20, ScrapeJob.KUBE_APISERVER: 20_000, ScrapeJob.KUBELET: 2_000,
    ScrapeJob.KUEUE: 300, ScrapeJob.SLURM: 100, ScrapeJob.PROMETHEUS: 1_500, ScrapeJob.ALERTMANAGER: 300,
}
NODE_SERIES_PER_INTERFACE = 150  # netdev, netclass and ethtool (a ConnectX port has ~100 ethtool counters)
KUBELET_SERIES_PER_GPU = 50  # pods and containers of the jobs a GPU runs
SERIES_PER_TEAM = 150  # a ClusterQueue's gauges and wait histograms; an account's job gauges and histograms
BYTES_PER_SAMPLE = 2  # the upper end of Prometheus's documented 1-2 bytes per compacted sample
DISK_HEADROOM = 1.3  # write-ahead log (about two hours of samples) and compaction's temporary blocks
GIB = 1024 ** 3


@dataclass(frozen=True, slots=True)
class ScrapeTarget:
    job: str
    host: str
    address: str  # host:port, the host's management address
    labels: tuple[tuple[str, str], ...]  # identity: host, rack, su, role (and the GPU model on GPU servers)
    series: int  # the estimate for this target


@dataclass(frozen=True, slots=True)
class InterfaceRole:
    """What a host interface carries, for the series of exporters that name it (``device`` label)."""

    device: str
    plane: str
    rail: int | None


@dataclass(frozen=True, slots=True)
class MonitoringPlan:
    host: str  # the control node Prometheus and Alertmanager run on
    address: str  # its management address: both listen there
    prometheus_port: int
    alertmanager_port: int
    scrape_interval_s: int
    retention_days: int
    targets: tuple[ScrapeTarget, ...]
    interfaces: tuple[InterfaceRole, ...]  # the GPU servers' planned interfaces by name
    gpu_rails: tuple[tuple[int, int], ...]  # (GPU index, rail of its NIC) where the data NICs pair with GPUs
    mounts: tuple[str, ...]  # the mount points every GPU server must have (storage tiers)
    mount_hosts: tuple[str, ...]  # the hosts that mount them
    gpu_hosts: tuple[str, ...]
    pfc_priority: int | None  # RoCE's lossless priority on the hosts' NICs; None without RoCE
    teams: tuple[str, ...] = ()  # the declared teams: Kueue's ClusterQueues and Slurm's accounts carry their names

    @property
    def series(self) -> int:
        return sum(target.series for target in self.targets)

    @property
    def samples_per_s(self) -> float:
        return self.series / self.scrape_interval_s

    @property
    def retention_bytes(self) -> int:
        """What the retention period holds once compacted: Prometheus's retention.size cap."""
        return math.ceil(self.samples_per_s * self.retention_days * 86_400 * BYTES_PER_SAMPLE)

    @property
    def disk_gib(self) -> int:
        return max(1, math.ceil(self.retention_bytes * DISK_HEADROOM / GIB))

    def jobs(self) -> tuple[str, ...]:
        present = {target.job for target in self.targets}
        return tuple(job for job in ScrapeJob.ORDER if job in present)

    def to_dict(self) -> dict[str, object]:
        return {
            "host": self.host, "address": self.address, "prometheus_port": self.prometheus_port,
            "alertmanager_port": self.alertmanager_port, "scrape_interval_s": self.scrape_interval_s,
            "retention_days": self.retention_days, "series": self.series, "retention_bytes": self.retention_bytes,
            "disk_gib": self.disk_gib, "targets": {job: sum(t.job == job for t in self.targets) for job in self.jobs()},
        }


def _identity(device: Device) -> tuple[tuple[str, str], ...]:
    labels = [("host", device.name), ("role", device.kind)]
    if device.rack:
        labels.append(("rack", device.rack))
    if device.su is not None:
        labels.append(("su", f"su{device.su:02d}"))
    return tuple(labels)


def _interfaces(servers: Sequence[Device]) -> tuple[InterfaceRole, ...]:
    """Each planned interface name of the GPU servers once (a bond's members carry the bond's plane); the
    servers of one cluster share their interface names, which is what lets one relabel rule serve them all."""
    seen: dict[str, InterfaceRole] = {}
    for device in servers:
        for iface in device.interfaces:
            if iface.plane == Plane.OOB:
                continue
            for name in (iface.name, *iface.members):
                seen.setdefault(name, InterfaceRole(name, iface.plane, iface.rail))
    return tuple(seen.values())


def _gpu_rails(servers: Sequence[Device]) -> tuple[tuple[int, int], ...]:
    """GPU i's rail, where every GPU server has exactly one data NIC per GPU (rail-optimised: GPU i sits
    beside NIC i); () where they differ."""
    pairs: set[tuple[tuple[int, int], ...]] = set()
    for device in servers:
        rails = [iface.rail for iface in device.interfaces if iface.plane == Plane.DATA and iface.rail is not None]
        if not device.gpus or len(rails) != device.gpus:
            return ()
        pairs.add(tuple(enumerate(rails)))
    return pairs.pop() if len(pairs) == 1 else ()


def _host(spec: ClusterSpec, control: list[Device]) -> Device | None:
    wanted = spec.monitoring.host
    if wanted is None:
        return control[0] if control else None
    for device in control:
        if device.name == wanted:
            return device
    names = ", ".join(d.name for d in control) or "none declared (control.nodes is 0)"
    raise PlanError([(("monitoring", "host"), f"{wanted!r} is not a control node; the control nodes: {names}")])


def plan_monitoring(spec: ClusterSpec, devices: Sequence[Device], mounts: Sequence[StorageMount],
                    slurm_controllers: Sequence[str], pfc_priority: int | None,
                    kueue: bool = False) -> MonitoringPlan | None:
    """The monitoring plan, or None for a cluster without a control node to run it on. `kueue`: Kueue runs (on
    the first control node, playbooks/kubernetes.yml)."""
    control = [d for d in devices if d.kind == DeviceKind.CONTROL]
    home = _host(spec, control)
    if home is None or home.management_ip is None:
        return None
    hosts = [d for d in devices if d.kind in DeviceKind.HOSTS and d.management_ip]
    servers = [d for d in hosts if d.kind == DeviceKind.SERVER]
    gpu_hosts = [d for d in servers if d.gpus]
    targets: list[ScrapeTarget] = []

    def add(job: str, device: Device, series: int, extra: tuple[tuple[str, str], ...] = ()) -> None:
        targets.append(ScrapeTarget(job, device.name, f"{device.management_ip}:{EXPORTER_PORTS[job]}",
                                    _identity(device) + extra, series))

    for device in hosts:
        planned = sum(1 + len(i.members) for i in device.interfaces if i.plane != Plane.OOB)
        add(ScrapeJob.NODE, device, SERIES_PER_TARGET[ScrapeJob.NODE] + NODE_SERIES_PER_INTERFACE * planned)
    for device in gpu_hosts:
        add(ScrapeJob.DCGM, device, SERIES_PER_TARGET[ScrapeJob.DCGM] + len(DCGM_FIELDS) * device.gpus,
            (("gpu_model", spec.catalog.servers[device.model].gpu.model),))
    if "kubernetes" in spec.schedulers:
        for device in control:
            add(ScrapeJob.KUBE_APISERVER, device, SERIES_PER_TARGET[ScrapeJob.KUBE_APISERVER])
        for device in gpu_hosts:
            add(ScrapeJob.KUBELET, device, SERIES_PER_TARGET[ScrapeJob.KUBELET] + KUBELET_SERIES_PER_GPU * device.gpus)
        if kueue and control:
            add(ScrapeJob.KUEUE, control[0], SERIES_PER_TARGET[ScrapeJob.KUEUE] + SERIES_PER_TEAM * len(spec.teams))
    for device in control:
        if device.name in slurm_controllers:
            add(ScrapeJob.SLURM, device,
                SERIES_PER_TARGET[ScrapeJob.SLURM] + len(servers) + SERIES_PER_TEAM * len(spec.teams))
    add(ScrapeJob.PROMETHEUS, home, SERIES_PER_TARGET[ScrapeJob.PROMETHEUS])
    add(ScrapeJob.ALERTMANAGER, home, SERIES_PER_TARGET[ScrapeJob.ALERTMANAGER])
    return MonitoringPlan(
        host=home.name, address=home.management_ip, prometheus_port=PROMETHEUS_PORT,
        alertmanager_port=ALERTMANAGER_PORT, scrape_interval_s=spec.monitoring.scrape_interval_s,
        retention_days=spec.monitoring.retention_days, targets=tuple(targets), interfaces=_interfaces(servers),
        gpu_rails=_gpu_rails(gpu_hosts), mounts=tuple(m.path for m in mounts),
        mount_hosts=tuple(d.name for d in servers) if mounts else (), gpu_hosts=tuple(d.name for d in gpu_hosts),
        pfc_priority=pfc_priority, teams=tuple(team.name for team in spec.teams),
    )
