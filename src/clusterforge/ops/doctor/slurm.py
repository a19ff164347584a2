"""Slurm check: every Slurm daemon enabled on the host is running (slurmctld, slurmdbd, slurmd, MUNGE, MariaDB).

A unit the Slurm roles enabled that is not active (killed, crashed, stopped) is a failure with its
`systemctl status` as evidence; `clusterforge up` starts it again (HostProvision's services probe sees it
as drift). A host with none of them enabled is not a Slurm host: skipped.
"""

from __future__ import annotations

from clusterforge.ops.doctor.findings import Finding, Status
from clusterforge.ops.doctor.shell import Shell

__all__ = ["daemons", "SLURM_UNITS"]

SLURM_UNITS = ("munge", "mariadb", "slurmdbd", "slurmctld", "slurmd")


def daemons(shell: Shell, _expect) -> list[Finding]:
    listed = shell.run("systemctl is-enabled " + " ".join(SLURM_UNITS)).out.split()
    enabled = [u for u, state in zip(SLURM_UNITS, listed, strict=False) if state == "enabled"]
    if not any(u.startswith("slurm") for u in enabled):
        return [Finding("slurm", Status.skip, "no Slurm daemon is enabled here", evidence=" ".join(listed))]
    states = shell.run("systemctl is-active " + " ".join(enabled)).out.split()
    down = [u for u, state in zip(enabled, states, strict=False) if state != "active"]
    if not down:
        return [Finding("slurm", Status.ok, f"{', '.join(enabled)} running")]
    evidence = shell.run("systemctl status --no-pager --lines=3 " + " ".join(down) + " 2>&1 | head -40").out
    return [Finding("slurm", Status.fail, f"{', '.join(down)} not running (enabled by the Slurm roles)",
                    evidence=evidence, fix="`clusterforge up` starts it again (or `systemctl start "
                    + " ".join(down) + "` on the host); read its log under /var/log/slurm/ first")]
