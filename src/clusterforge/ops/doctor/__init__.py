"""`clusterforge doctor`: walk the troubleshooting list on one host and say what is wrong, why we think so, and the fix.

Standard library only (it runs on a bare GPU node with ``python3 -m clusterforge.ops.doctor --local``).
A host is reached through a ``Shell`` (this machine, or SSH with the lab's or the operator's
ssh_config); what it should be comes from the rendered inventory's host_vars when one is given
(planned GPUs, data interfaces, mounts, RoCE), else only what needs no plan is checked.
"""

from clusterforge.ops.doctor.findings import Finding, Status, render
from clusterforge.ops.doctor.run import Expect, diagnose
from clusterforge.ops.doctor.shell import LocalShell, Shell, SshShell

__all__ = ["Expect", "Finding", "LocalShell", "Shell", "SshShell", "Status", "diagnose", "render"]
