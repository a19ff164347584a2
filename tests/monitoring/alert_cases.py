"""promtool unit-test cases: for every alert, input series that fire it and series that keep it silent.

Each case names the labels the firing alert carries (beyond ``alertname`` and ``severity``); the summary the
test expects is the rule's own template with those labels filled in.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Case", "CASES"]

GPU = {"host": "su01-r01-gpu01", "instance": "su01-r01-gpu01", "job": "dcgm", "gpu": "0"}
NIC = {"host": "su01-r01-gpu01", "instance": "su01-r01-gpu01", "job": "node", "device": "rail0", "plane": "data",
       "rail": "0"}
NODE = {"host": "su01-r01-gpu01", "instance": "su01-r01-gpu01", "job": "node", "role": "server"}
FS = {"host": "ctl-01", "instance": "ctl-01", "job": "node", "mountpoint": "/", "device": "/dev/sda1",
      "fstype": "ext4"}
QUEUE = {"cluster_queue": "research", "resource": "nvidia.com/gpu", "flavor": "h200"}
SLURM = {"host": "ctl-01", "instance": "ctl-01", "job": "slurm"}

Series = tuple[tuple[str, dict[str, str], str], ...]  # (metric, labels, promtool values)


@dataclass(frozen=True)
class Case:
    alert: str
    eval_min: int
    bad: Series
    good: Series
    labels: dict[str, str]  # of the firing alert


def _gpu(metric: str, values: str) -> tuple[str, dict[str, str], str]:
    return metric, GPU, values


CASES = (
    Case("GpuTemperatureWarning", 10, (_gpu("DCGM_FI_DEV_GPU_TEMP", "82x10"),),
         (_gpu("DCGM_FI_DEV_GPU_TEMP", "75x10"),), GPU),
    Case("GpuTemperatureCritical", 10, (_gpu("DCGM_FI_DEV_GPU_TEMP", "90x10"),),
         (_gpu("DCGM_FI_DEV_GPU_TEMP", "84x10"),), GPU),
    # fires: busy, 400 of 700 W, the clock down from 1980 to 900 MHz; silent: the healthy H100 of the real readings
    # (docs/acceptance/gpu-readings-2026-12-07): busy at its 700 W cap, 1350 of 1980 MHz
    Case("GpuBusyBelowPowerCap", 20,
         (_gpu("DCGM_FI_DEV_GPU_UTIL", "95x20"), _gpu("DCGM_FI_DEV_POWER_USAGE", "400x20"),
          _gpu("DCGM_FI_DEV_POWER_MGMT_LIMIT", "700x20"), _gpu("DCGM_FI_DEV_SM_CLOCK", "1980 1980 900x18")),
         (_gpu("DCGM_FI_DEV_GPU_UTIL", "95x20"), _gpu("DCGM_FI_DEV_POWER_USAGE", "697x20"),
          _gpu("DCGM_FI_DEV_POWER_MGMT_LIMIT", "700x20"), _gpu("DCGM_FI_DEV_SM_CLOCK", "1980 1980 1350x18")), GPU),
    # 0x40 is HW thermal slowdown; 0x4 (SW power cap) alone is not the hardware's doing
    Case("GpuHardwareThrottled", 10, (_gpu("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "64x10"),),
         (_gpu("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "4x10"),), GPU),
    Case("GpuMemoryNearlyFull", 20, (_gpu("DCGM_FI_DEV_FB_USED", "97000x20"), _gpu("DCGM_FI_DEV_FB_FREE", "1000x20")),
         (_gpu("DCGM_FI_DEV_FB_USED", "50000x20"), _gpu("DCGM_FI_DEV_FB_FREE", "48000x20")), GPU),
    Case("GpuXidCritical", 5, (_gpu("DCGM_FI_DEV_XID_ERRORS", "79x5"),), (_gpu("DCGM_FI_DEV_XID_ERRORS", "13x5"),),
         GPU),
    # a critical Xid is GpuXidCritical's alone
    Case("GpuXidError", 5, (_gpu("DCGM_FI_DEV_XID_ERRORS", "13x5"),), (_gpu("DCGM_FI_DEV_XID_ERRORS", "79x5"),),
         GPU),
    Case("GpuEccDoubleBitErrors", 6, (_gpu("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "0 0 0 1 1 1 1"),),
         (_gpu("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "0x6"),), GPU),
    Case("GpuRowRemapFailure", 5, (_gpu("DCGM_FI_DEV_ROW_REMAP_FAILURE", "1x5"),),
         (_gpu("DCGM_FI_DEV_ROW_REMAP_FAILURE", "0x5"),), GPU),
    Case("GpuRowRemapPending", 4, (_gpu("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "0 0 2 2 2"),),
         (_gpu("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "0x4"),), GPU),
    Case("GpuPcieReplays", 10, (_gpu("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "0+50x10"),),
         (_gpu("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "0+1x10"),), GPU),
    Case("GpuNvlinkErrors", 4, (_gpu("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "0 0 3 3 3"),),
         (_gpu("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "0x4"),), GPU),
    Case("NetworkLinkFlapping", 5, (("node_network_carrier_changes_total", NIC, "0 1 2 3 4 5"),),
         (("node_network_carrier_changes_total", NIC, "1x5"),), NIC),
    Case("RocePfcPauseStorm", 3, (("node_ethtool_tx_pause_storm_error_events", NIC, "0 0 1 1"),),
         (("node_ethtool_tx_pause_storm_error_events", NIC, "0x3"),), NIC),
    # the lab declares PFC on priority 3: 2000 pause frames a second against 10
    Case("RocePfcPauseHigh", 20, (("node_ethtool_rx_prio3_pause", NIC, "0+120000x20"),),
         (("node_ethtool_rx_prio3_pause", NIC, "0+600x20"),), NIC),
    Case("RoceEcnMarks", 25, (("node_ethtool_rx_ecn_mark", NIC, "0+120000x25"),),
         (("node_ethtool_rx_ecn_mark", NIC, "0+60x25"),), NIC),
    Case("NodeDown", 5, (("up", NODE, "0x5"),), (("up", NODE, "1x5"),), NODE),
    Case("ExporterDown", 10, (("up", GPU, "0x10"),), (("up", GPU, "1x10"),), GPU),
    Case("FilesystemNearlyFull", 20,
         (("node_filesystem_avail_bytes", FS, "5x20"), ("node_filesystem_size_bytes", FS, "100x20"),
          ("node_filesystem_readonly", FS, "0x20")),
         (("node_filesystem_avail_bytes", FS, "50x20"), ("node_filesystem_size_bytes", FS, "100x20"),
          ("node_filesystem_readonly", FS, "0x20")), FS),
    Case("DiskSaturated", 25, (("node_disk_io_time_seconds_total", {**NODE, "device": "nvme0n1"}, "0+60x25"),),
         (("node_disk_io_time_seconds_total", {**NODE, "device": "nvme0n1"}, "0+30x25"),),
         {**NODE, "device": "nvme0n1"}),
    # the lab's GPU servers mount /mnt/hot and /mnt/cold: the cold one is missing
    Case("ParallelFsMountMissing", 10,
         (("up", NODE, "1x10"),
          ("node_filesystem_size_bytes", {**NODE, "mountpoint": "/mnt/hot", "fstype": "fuse.glusterfs"}, "1e12x10")),
         (("up", NODE, "1x10"),
          ("node_filesystem_size_bytes", {**NODE, "mountpoint": "/mnt/hot", "fstype": "fuse.glusterfs"}, "1e12x10"),
          ("node_filesystem_size_bytes", {**NODE, "mountpoint": "/mnt/cold", "fstype": "fuse.glusterfs"}, "1e12x10")),
         {**NODE, "mountpoint": "/mnt/cold"}),
    Case("KueueQuotaSaturated", 40,
         (("kueue_cluster_queue_resource_usage", QUEUE, "8x40"), ("kueue_cluster_queue_nominal_quota", QUEUE, "8x40"),
          ("kueue_pending_workloads", {"cluster_queue": "research", "status": "active"}, "3x40")),
         (("kueue_cluster_queue_resource_usage", QUEUE, "4x40"), ("kueue_cluster_queue_nominal_quota", QUEUE, "8x40"),
          ("kueue_pending_workloads", {"cluster_queue": "research", "status": "active"}, "3x40")),
         {"cluster_queue": "research", "resource": "nvidia.com/gpu"}),
    # every workload waits between one and two hours / every one is admitted within ten minutes
    Case("KueueAdmissionWaitHigh", 40,
         tuple(("kueue_admission_wait_time_seconds_bucket", {"cluster_queue": "research", "le": le}, values)
               for le, values in (("600", "0x40"), ("3600", "0x40"), ("7200", "0+10x40"), ("+Inf", "0+10x40"))),
         tuple(("kueue_admission_wait_time_seconds_bucket", {"cluster_queue": "research", "le": le}, "0+10x40")
               for le in ("600", "3600", "7200", "+Inf")),
         {"cluster_queue": "research"}),
    Case("SlurmQueueStalled", 40, (("slurm_queue_pending", SLURM, "5x40"), ("slurm_queue_running", SLURM, "0x40")),
         (("slurm_queue_pending", SLURM, "5x40"), ("slurm_queue_running", SLURM, "2x40")), SLURM),
    Case("SlurmNodesUnavailable", 20, (("slurm_nodes_down", SLURM, "1x20"), ("slurm_nodes_drain", SLURM, "0x20")),
         (("slurm_nodes_down", SLURM, "0x20"), ("slurm_nodes_drain", SLURM, "0x20")), SLURM),
)
