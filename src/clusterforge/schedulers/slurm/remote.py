"""The live Slurm cluster as the commands reach it: commands on the primary controller over SSH
(`controller_runner`), the stack's MUNGE key (`stack_munge_key`), and playbooks/slurm.yml on one node
(`converge_node`)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clusterforge.plan import Plan
from clusterforge.targets import Reach

__all__ = ["Runner", "SSH_TIMEOUT_S", "controller_runner", "converge_node", "stack_munge_key"]

SSH_TIMEOUT_S = 120
Runner = Callable[[str], tuple[int, str, str]]


def controller_runner(plan: Plan, target: Reach, ssh_config: Path | None) -> Runner:
    """run(command) -> (rc, stdout, stderr) on the primary Slurm controller (the first control node), over SSH:
    the lab's ssh_config by host name, else the management address with `ssh_config` if given."""
    assert plan.slurm is not None
    control = plan.slurm.controllers[0]
    if target.lab and ssh_config is None:
        from clusterforge.lab import ssh_config_path

        ssh_config = ssh_config_path(plan.cluster)
    host = control.name if target.lab else control.address
    base = ["ssh", *(["-F", str(ssh_config)] if ssh_config else []), "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
            host]

    def run(command: str) -> tuple[int, str, str]:
        try:
            proc = subprocess.run([*base, command], capture_output=True, text=True, timeout=SSH_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return 124, "", f"{host}: no answer within {SSH_TIMEOUT_S} s"
        return proc.returncode, proc.stdout, proc.stderr

    return run


def stack_munge_key(stack: str) -> str | None:
    """The stack's MUNGE key (a secret output), or None when it has none (no Slurm, or never applied)."""
    from clusterforge.pulumi import automation

    handle = automation.open_stack(stack, None, automation.Backend.resolve(None, None))
    output = handle.outputs().get("slurm_munge_key")
    return str(output.value) if output is not None and output.value else None


def converge_node(rendered: Path, private: Path, host: str, munge_key: str, target: Reach, ssh_config: Path | None,
                  say: Callable[[str], Any]) -> Any:
    """playbooks/slurm.yml on one GPU server (a replaced machine has no slurmd yet): a ProvisionResult."""
    from clusterforge.provision import run_site
    from clusterforge.provision.runner import write_private_extravars
    from clusterforge.pulumi.slurm.wiring import SLURM_PLAYBOOK, slurm_extravars

    # The key goes in env/extravars (0600, only for the run), as HostProvision passes it: extra vars handed to
    # ansible-runner directly are written into its artifacts (artifacts/<id>/command), seen on the lab.
    vars_file = write_private_extravars(private, {**slurm_extravars(target.lab), "cf_slurm_munge_key": munge_key})
    try:
        return run_site(rendered / "ansible" / "inventory.yml", private, limit=host, extravars=None,
                        ssh_config=ssh_config, playbook=SLURM_PLAYBOOK, progress=say)
    finally:
        vars_file.unlink(missing_ok=True)
