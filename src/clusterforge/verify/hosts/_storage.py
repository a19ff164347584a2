"""Parsers for the storage checks: GlusterFS CLI output and fio's JSON. Pure functions, unit-tested.

Formats: ``gluster volume info NAME`` prints ``Key: value`` lines (``Type:``, ``Status:``,
``BrickN: host:/path``); ``gluster volume status NAME`` prints one ``Brick host:/path  TCP-port
RDMA-port Online Pid`` row per brick (``Online`` is Y or N); ``fio --output-format=json`` has
``jobs[].write.bw`` in KiB/s (fio HOWTO, "Interpreting the output": bw is KiB/s in JSON).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["VolumeInfo", "parse_volume_info", "parse_volume_status", "parse_fio_write_mbps", "LAYOUT_TYPES",
           "LIVE_FSTYPES", "kernel_visible"]

# cf_storage.volumes[].layout -> the Type glusterd reports
LAYOUT_TYPES = {"distribute": "Distribute", "replicate": "Replicate", "distributed-replicate": "Distributed-Replicate"}
# kind -> the file system type of a live mount in /proc/mounts
LIVE_FSTYPES = {"nfs": ("nfs", "nfs4"), "lustre": ("lustre",), "beegfs": ("beegfs",), "gpfs": ("gpfs",),
                "weka": ("wekafs",), "glusterfs": ("fuse.glusterfs",)}  # fmt: skip
# Options mount.glusterfs hands to the kernel (everything else configures the client process).
_GLUSTER_KERNEL = {"rw", "ro", "atime", "noatime", "diratime", "nodiratime", "relatime", "norelatime",
                   "strictatime", "nostrictatime", "lazyatime", "nolazyatime", "dev", "nodev", "exec",
                   "noexec", "suid", "nosuid"}  # fmt: skip
# Options that mount(8)/systemd consume and the kernel never shows in /proc/mounts.
_USERSPACE = {"_netdev", "defaults", "auto", "noauto", "nofail", "user", "users", "nouser", "owner", "group"}


def kernel_visible(kind: str, option: str) -> bool:
    """Whether a declared mount option shows in /proc/mounts for a live mount of ``kind``."""
    if option in _USERSPACE or option.startswith("x-"):
        return False
    if kind == "glusterfs":
        return option in _GLUSTER_KERNEL
    return True


@dataclass(frozen=True)
class VolumeInfo:
    name: str
    type: str
    status: str
    bricks: tuple[str, ...]
    options: dict[str, str]


def parse_volume_info(text: str) -> VolumeInfo | None:
    """The first volume in ``gluster volume info`` output, or None when there is none."""
    fields: dict[str, str] = {}
    bricks: list[tuple[int, str]] = []
    options: dict[str, str] = {}
    in_options = False
    for line in text.splitlines():
        if not line.strip():
            if fields:
                in_options = False
            continue
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep:
            continue
        if key == "Volume Name" and "Volume Name" in fields:
            break  # a second volume
        m = re.fullmatch(r"Brick(\d+)", key)
        if m:
            bricks.append((int(m.group(1)), value))
        elif key == "Options Reconfigured":
            in_options = True
        elif in_options:
            options[key] = value
        else:
            fields.setdefault(key, value)
    if "Volume Name" not in fields:
        return None
    return VolumeInfo(fields["Volume Name"], fields.get("Type", ""), fields.get("Status", ""),
                      tuple(b for _, b in sorted(bricks)), options)


def parse_volume_status(text: str) -> dict[str, bool]:
    """``gluster volume status NAME`` -> {"host:/path": online} for every brick row."""
    out: dict[str, bool] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0] == "Brick" and ":/" in parts[1]:
            out[parts[1]] = parts[-2] == "Y"
    return out


def parse_fio_write_mbps(text: str) -> float:
    """Sequential-write bandwidth summed over fio's jobs, in MB/s (10^6 bytes), from its JSON output."""
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in fio's output")
    data = json.loads(text[start:])
    jobs = data.get("jobs") or []
    if not jobs:
        raise ValueError("fio reported no jobs")
    kib_s = sum(float(job["write"]["bw"]) for job in jobs)
    return kib_s * 1024 / 1e6
