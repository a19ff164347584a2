"""The whole cluster emulated on one Linux machine.

Hosts are systemd-nspawn containers (systemd + sshd, FRR on routers) booted from one cached
Debian rootfs through per-host overlays, each in its own network namespace; bridge segments
are Linux bridges, p2p segments veth pairs.  Input is a :class:`LabTopology`.

Public API::

    up(topology, progress=cb) -> UpResult          # idempotent
    status(topology_or_name) -> list[HostStatus]
    down(topology_or_name) -> DownResult           # also cleans crashed/partial labs
    ssh_command(topology_or_name, host, remote=()) -> list[str]
    ssh_config_path(topology_or_name) -> Path      # for Ansible / testinfra
    ensure_rootfs(force=False) -> Path             # cached Debian 12 image
    missing_prerequisites() -> list[str]           # why the lab cannot run here
"""

from .manager import DownResult, HostStatus, UpResult, down, ssh_command, ssh_config_path, status, up
from .reimage import reimage
from .rootfs import ensure_rootfs
from .topology import LabHost, LabInterface, LabRoute, LabSegment, LabTopology
from .util import LabError, missing_prerequisites

__all__ = [
    "DownResult", "HostStatus", "LabError", "LabHost", "LabInterface", "LabRoute", "LabSegment", "LabTopology",
    "UpResult", "down", "ensure_rootfs", "missing_prerequisites", "reimage", "ssh_command", "ssh_config_path",
    "status", "up",
]  # fmt: skip
