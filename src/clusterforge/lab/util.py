"""Small helpers shared by the lab modules: where things live; running commands and atomic writes come from
``clusterforge.hostio``, which the bare-metal install shares."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from clusterforge.hostio import HostError, Progress, file_lock, quiet, run, state_dir, write_atomic, write_json_atomic
from clusterforge.paths import lab_home

LabError = HostError
"""Anything that stops the lab from coming up or going down (the error the lab's commands and installs share)."""
_noop = quiet
__all__ = ["LabError", "Progress", "_noop", "lab_dir", "run", "write_atomic", "write_json_atomic", "file_lock",
           "lab_home", "missing_prerequisites"]


def lab_dir(lab: str) -> Path:
    return state_dir(lab)


def missing_prerequisites() -> list[str]:
    """Reasons the lab cannot run on this machine (empty when it can)."""
    why = []
    if os.geteuid() != 0:
        why.append("not root")
    for tool in ("debootstrap", "systemd-nspawn", "ip", "ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            why.append(f"{tool} not found")
    try:
        with open("/proc/filesystems") as f:
            if "overlay" not in f.read():
                why.append("kernel lacks overlayfs")
    except OSError:
        why.append("no /proc/filesystems")
    return why
