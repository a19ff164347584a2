"""Alerting rules, one group per concern, each rule a typed record; rendered to Prometheus rule files.

Thresholds are starting values an operator tunes in one place (this module): GPU temperature warns at 80 C
and pages at 85 C; a GPU that is at least 90 % busy yet draws under 80 % of its power limit with its SM clock
under 80 % of the highest it reached in a day is held down by something other than its power budget; memory,
disk and file-system rules fire near full. Every rule has promtool unit tests
(tests/monitoring) that fire it on a bad series and keep it silent on a good one.

Metric sources: dcgm-exporter's DCGM fields (the list roles/dcgm_exporter collects, plan.monitoring.DCGM_FIELDS),
node_exporter 1.5's collectors that roles/node_exporter enables (netclass, ethtool with ConnectX's mlx5
counters, filesystem, diskstats), Kueue's ClusterQueue metrics, prometheus-slurm-exporter's queue and node
gauges, and Prometheus's own ``up``.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.plan.monitoring import MonitoringPlan, ScrapeJob
from clusterforge.render.monitoring import promql

__all__ = ["AlertRule", "RuleGroup", "rule_groups", "rules_document", "CRITICAL_XIDS", "WARNING", "CRITICAL",
           "GPU_TEMP_WARNING_C", "GPU_TEMP_CRITICAL_C", "GPU_BELOW_CAP_FRACTION", "GPU_CLOCK_DOWN_FRACTION",
           "GPU_MEMORY_FULL_FRACTION", "FILESYSTEM_FREE_FRACTION", "DISK_BUSY_FRACTION", "PFC_PAUSES_PER_S",
           "ECN_MARKS_PER_S"]

WARNING = "warning"
CRITICAL = "critical"

# Xid codes that take a GPU out of service until it is reset or replaced (NVIDIA's Xid catalogue):
# 48 double-bit ECC, 63/64 row-remapping event/failure, 74 NVLink error, 79 fallen off the bus,
# 94/95 contained/uncontained ECC error.
CRITICAL_XIDS = (48, 63, 64, 74, 79, 94, 95)
# NVML clock-throttle reasons that mean the hardware slowed the GPU (nvmlClocksThrottleReasons):
# HW slowdown 0x8, HW thermal slowdown 0x40, HW power-brake slowdown 0x80.
HW_THROTTLE_BITS = (0x8, 0x40, 0x80)
# The thresholds the rules fire at (the dashboards draw the same lines: render/monitoring/dashboards.py)
GPU_TEMP_WARNING_C = 80
GPU_TEMP_CRITICAL_C = 85
# A busy GPU drawing less than this share of its power limit while its SM clock is below GPU_CLOCK_DOWN_FRACTION of
# its own highest clock of the last day: slowed by heat, a power brake or lowered application clocks. Not "at the
# cap": real H100 readings (docs/acceptance/gpu-readings-2026-12-07) show a healthy card under bf16 matmul at its
# 700 W software power cap (693-707 W, SM 1290-1380 of 1980 MHz) -- a rule on that would fire through every long job.
GPU_BELOW_CAP_FRACTION = 0.8
GPU_CLOCK_DOWN_FRACTION = 0.8
GPU_MEMORY_FULL_FRACTION = 0.95
FILESYSTEM_FREE_FRACTION = 0.10
DISK_BUSY_FRACTION = 0.95
PFC_PAUSES_PER_S = 1000
ECN_MARKS_PER_S = 1000


@dataclass(frozen=True, slots=True)
class AlertRule:
    name: str
    expr: str
    for_s: int
    severity: str
    summary: str  # Go template text: {{ $labels.NAME }} only, never a declared value

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"alert": self.name, "expr": self.expr}
        if self.for_s:
            out["for"] = _duration(self.for_s)
        out["labels"] = {"severity": self.severity}
        out["annotations"] = {"summary": self.summary}
        return out


@dataclass(frozen=True, slots=True)
class RuleGroup:
    name: str
    rules: tuple[AlertRule, ...]


def _duration(seconds: int) -> str:
    return f"{seconds // 60}m" if seconds % 60 == 0 else f"{seconds}s"


def _any(*exprs: str) -> str:
    return " or ".join(f"({expr})" for expr in exprs)


def gpu_rules() -> RuleGroup:
    gpu = "GPU {{ $labels.gpu }} on {{ $labels.host }}"
    throttle = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"
    return RuleGroup("gpu", (
        AlertRule("GpuTemperatureWarning", f"DCGM_FI_DEV_GPU_TEMP >= {GPU_TEMP_WARNING_C}", 300, WARNING,
                  f"{gpu} is at or above {GPU_TEMP_WARNING_C} C"),
        AlertRule("GpuTemperatureCritical", f"DCGM_FI_DEV_GPU_TEMP >= {GPU_TEMP_CRITICAL_C}", 120, CRITICAL,
                  f"{gpu} is at or above {GPU_TEMP_CRITICAL_C} C"),
        AlertRule("GpuBusyBelowPowerCap",
                  "DCGM_FI_DEV_GPU_UTIL >= 90"
                  f" and DCGM_FI_DEV_POWER_USAGE < {GPU_BELOW_CAP_FRACTION} * DCGM_FI_DEV_POWER_MGMT_LIMIT"
                  f" and DCGM_FI_DEV_SM_CLOCK < {GPU_CLOCK_DOWN_FRACTION} * max_over_time(DCGM_FI_DEV_SM_CLOCK[1d])",
                  900, WARNING, f"{gpu} is busy but held below its power limit with lowered clocks (throttled)"),
        AlertRule("GpuHardwareThrottled",
                  _any(*(f"floor({throttle} / {bit}) % 2 == 1" for bit in HW_THROTTLE_BITS)), 300, WARNING,
                  f"{gpu} is slowed by hardware (thermal, power brake or slowdown)"),
        AlertRule("GpuMemoryNearlyFull",
                  f"DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > {GPU_MEMORY_FULL_FRACTION}",
                  900, WARNING,
                  f"{gpu} has used more than 95 % of its memory"),
        AlertRule("GpuXidCritical", _any(*(f"DCGM_FI_DEV_XID_ERRORS == {xid}" for xid in CRITICAL_XIDS)), 0,
                  CRITICAL, f"{gpu} reported an Xid that needs a reset or replacement"),
        AlertRule("GpuXidError",
                  "DCGM_FI_DEV_XID_ERRORS > 0 unless ("
                  + " or ".join(f"DCGM_FI_DEV_XID_ERRORS == {xid}" for xid in CRITICAL_XIDS) + ")",
                  0, WARNING, f"{gpu} reported an Xid error"),
        AlertRule("GpuEccDoubleBitErrors", "increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[10m]) > 0", 0, CRITICAL,
                  f"{gpu} had uncorrectable (double-bit) ECC errors"),
        AlertRule("GpuRowRemapFailure", "DCGM_FI_DEV_ROW_REMAP_FAILURE > 0", 0, CRITICAL,
                  f"{gpu} failed to remap a memory row: replace it"),
        AlertRule("GpuRowRemapPending", "increase(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS[1h]) > 0", 0, WARNING,
                  f"{gpu} remapped rows after uncorrectable errors: reset it when drained"),
        AlertRule("GpuPcieReplays", "increase(DCGM_FI_DEV_PCIE_REPLAY_COUNTER[10m]) > 100", 0, WARNING,
                  f"{gpu} retries PCIe transfers (degraded link)"),
        AlertRule("GpuNvlinkErrors", _any(*(f"increase(DCGM_FI_DEV_NVLINK_{kind}_COUNT_TOTAL[10m]) > 0" for kind in (
            "RECOVERY_ERROR", "REPLAY_ERROR", "CRC_FLIT_ERROR", "CRC_DATA_ERROR"))), 0, WARNING,
                  f"{gpu} has NVLink errors"),
    ))


def network_rules(pfc_priority: int | None) -> RuleGroup:
    nic = "{{ $labels.device }} on {{ $labels.host }}"
    rules = [
        AlertRule("NetworkLinkFlapping", 'increase(node_network_carrier_changes_total{plane!=""}[15m]) > 2', 0,
                  WARNING, f"{nic} changed carrier more than twice in 15 minutes"),
    ]
    if pfc_priority is not None:
        pause = f"node_ethtool_rx_prio{int(pfc_priority)}_pause"
        rules += [
            AlertRule("RocePfcPauseStorm", "increase(node_ethtool_tx_pause_storm_error_events[10m]) > 0", 0, CRITICAL,
                      f"{nic} stopped sending PFC pause after a pause storm"),
            AlertRule("RocePfcPauseHigh", f"rate({pause}[5m]) > {PFC_PAUSES_PER_S}", 600, WARNING,
                      f"{nic} receives more than 1000 PFC pause frames a second on the RoCE priority"),
            AlertRule("RoceEcnMarks", f"rate(node_ethtool_rx_ecn_mark[5m]) > {ECN_MARKS_PER_S}", 900, WARNING,
                      f"{nic} receives more than 1000 ECN-marked packets a second (sustained congestion)"),
        ]
    return RuleGroup("network", tuple(rules))


def node_rules(monitoring: MonitoringPlan) -> RuleGroup:
    rules = [
        AlertRule("NodeDown", f"up{promql.matchers(job=ScrapeJob.NODE)} == 0", 120, CRITICAL,
                  "{{ $labels.host }} does not answer (node exporter down or host off)"),
        AlertRule("ExporterDown", 'up{job=~"dcgm|kubelet|slurm|kube-apiserver"} == 0', 300, WARNING,
                  "{{ $labels.job }} on {{ $labels.host }} does not answer"),
        AlertRule("FilesystemNearlyFull",
                  'node_filesystem_avail_bytes{fstype!~"tmpfs|ramfs"} / node_filesystem_size_bytes'
                  f" < {FILESYSTEM_FREE_FRACTION:.2f}"
                  " and node_filesystem_readonly == 0", 600, WARNING,
                  "{{ $labels.mountpoint }} on {{ $labels.host }} has less than 10 % free"),
        AlertRule("DiskSaturated", f"rate(node_disk_io_time_seconds_total[5m]) > {DISK_BUSY_FRACTION}", 900, WARNING,
                  "{{ $labels.device }} on {{ $labels.host }} is busy more than 95 % of the time"),
    ]
    if monitoring.mounts:
        servers = f"up{promql.matchers(job=ScrapeJob.NODE, role='server')} == 1"
        missing = (f"label_replace({servers} unless on(instance) "
                   f"node_filesystem_size_bytes{promql.matchers(mountpoint=path)}, \"mountpoint\", "
                   f"{promql.string(path)}, \"\", \"\")" for path in monitoring.mounts)
        rules.append(AlertRule("ParallelFsMountMissing", " or ".join(missing), 300, CRITICAL,
                               "{{ $labels.host }} has no {{ $labels.mountpoint }} mounted"))
    return RuleGroup("node", tuple(rules))


def kueue_rules() -> RuleGroup:
    usage = "sum by (cluster_queue, resource) (kueue_cluster_queue_resource_usage)"
    quota = "sum by (cluster_queue, resource) (kueue_cluster_queue_nominal_quota)"
    pending = 'sum by (cluster_queue) (kueue_pending_workloads{status="active"}) > 0'
    wait = "histogram_quantile(0.9, sum by (cluster_queue, le) (rate(kueue_admission_wait_time_seconds_bucket[30m])))"
    return RuleGroup("kueue", (
        AlertRule("KueueQuotaSaturated", f"{usage} / {quota} >= 1 and on(cluster_queue) {pending}", 1800, WARNING,
                  "ClusterQueue {{ $labels.cluster_queue }} uses its whole {{ $labels.resource }} quota"
                  " with workloads waiting"),
        AlertRule("KueueAdmissionWaitHigh", f"{wait} > 3600", 1800, WARNING,
                  "ClusterQueue {{ $labels.cluster_queue }}: 9 in 10 workloads wait more than an hour"
                  " for admission"),
    ))


def slurm_rules() -> RuleGroup:
    return RuleGroup("slurm", (
        AlertRule("SlurmQueueStalled", "slurm_queue_pending > 0 and slurm_queue_running == 0", 1800, WARNING,
                  "Slurm on {{ $labels.host }} has pending jobs and none running"),
        AlertRule("SlurmNodesUnavailable", "slurm_nodes_down > 0 or slurm_nodes_drain > 0", 900, WARNING,
                  "Slurm on {{ $labels.host }} has nodes down or drained"),
    ))


def rule_groups(monitoring: MonitoringPlan) -> tuple[RuleGroup, ...]:
    """The groups the plan's jobs feed: GPU rules with dcgm-exporter targets, Kueue with Kubernetes, Slurm with
    a Slurm exporter."""
    jobs = monitoring.jobs()
    groups = [node_rules(monitoring), network_rules(monitoring.pfc_priority)]
    if ScrapeJob.DCGM in jobs:
        groups.insert(0, gpu_rules())
    if ScrapeJob.KUBE_APISERVER in jobs:
        groups.append(kueue_rules())
    if ScrapeJob.SLURM in jobs:
        groups.append(slurm_rules())
    return tuple(groups)


def rules_document(group: RuleGroup) -> dict[str, object]:
    return {"groups": [{"name": group.name, "rules": [rule.to_dict() for rule in group.rules]}]}
