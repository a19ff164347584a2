"""The Slurm layer for the commands that read or act on it: what the plan expects Slurm to report
(`slurm_expected`), a runner of commands on the Slurm controller over SSH (`controller_runner`), and the
`verify` table of the Slurm checks (clusterforge.verify.slurm_checks)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from clusterforge.cli._common import err, print_layer_checks, say

__all__ = ["slurm_wanted", "slurm_expected", "controller_runner", "slurm_results", "print_slurm", "stack_munge_key",
           "converge_node", "SSH_TIMEOUT_S"]

SSH_TIMEOUT_S = 120


def slurm_wanted(plan: Any) -> bool:
    """The declaration asks for Slurm (the plan has a SlurmPlan) and a controller to run it."""
    return plan.slurm is not None and bool(plan.slurm.controllers) and bool(plan.slurm.nodes)


def slurm_expected(plan: Any) -> dict[str, Any]:
    """What a converged cluster's slurmctld reports (plan/slurm.py): its nodes with their GPU counts, the
    switch tree or the NVLink blocks of the topology plugin the plan chose, the teams' GPU limits."""
    slurm = plan.slurm
    topology: dict[str, Any] = {"plugin": slurm.topology_plugin, "switches": [], "blocks": []}
    if slurm.topology_plugin == "topology/tree":
        topology["switches"] = [{"name": s.name, "nodes": list(s.nodes), "switches": list(s.switches)}
                                for s in plan.scheduler.tree]
    elif slurm.topology_plugin == "topology/block":
        topology["blocks"] = [{"name": b.name, "nodes": list(b.nodes)} for b in plan.scheduler.blocks]
    return {
        "nodes": [{"name": n.name, "gpus": n.gpus} for n in slurm.nodes],
        "topology": topology,
        "accounts": [{"name": a.name, "gpus": a.gpus} for a in slurm.accounts],
    }


def controller_runner(plan: Any, target: str, ssh_config: Path | None):
    """run(command) -> (rc, stdout, stderr) on the primary Slurm controller (the first control node), over SSH:
    the lab's ssh_config by host name, else the management address with `ssh_config` if given."""
    control = plan.slurm.controllers[0]
    if target == "lab" and ssh_config is None:
        from clusterforge.lab import ssh_config_path

        ssh_config = ssh_config_path(plan.cluster)
    host = control.name if target == "lab" else control.address
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


def slurm_results(plan: Any, target: str, ssh_config: Path | None) -> tuple[list | None, str]:
    """(the Slurm checks, or None with why they could not run)."""
    from clusterforge.verify.slurm_checks import run_slurm_checks

    run = controller_runner(plan, target, ssh_config)
    rc, stdout, stderr = run("scontrol ping")
    if rc != 0 or "UP" not in stdout:
        why = (stderr or stdout).strip().splitlines()[-1:] or [f"exit {rc}"]
        return None, f"slurmctld does not answer on the controller ({why[0][:300]})"
    return run_slurm_checks(run, slurm_expected(plan), simulated=plan.slurm.simulated), ""


def print_slurm(checks: list | None, why: str, simulated: bool) -> None:
    title = "slurm layer" + (" (SIMULATED GPUs: placeholder files, no GPU devices)" if simulated else "")
    print_layer_checks("slurm", title, checks, why)


def stack_munge_key(stack: str) -> str | None:
    """The stack's MUNGE key (a secret output), or None when it has none (no Slurm, or never applied)."""
    from clusterforge.pulumi import automation

    handle = automation.open_stack(stack, None, automation.Backend.resolve(None, None))
    output = handle.outputs().get("slurm_munge_key")
    return str(output.value) if output is not None and output.value else None


def converge_node(rendered: Path, private: Path, host: str, munge_key: str, target: str, ssh_config: Path | None):
    """playbooks/slurm.yml on one GPU server (a replaced machine has no slurmd yet): a ProvisionResult."""
    from clusterforge.provision import run_site
    from clusterforge.provision.runner import write_private_extravars
    from clusterforge.pulumi.slurm.wiring import SLURM_PLAYBOOK, slurm_extravars

    # The key goes in env/extravars (0600, only for the run), as HostProvision passes it: extra vars handed to
    # ansible-runner directly are written into its artifacts (artifacts/<id>/command), seen on the lab.
    vars_file = write_private_extravars(private, {**slurm_extravars(target == "lab"), "cf_slurm_munge_key": munge_key})
    try:
        return run_site(rendered / "ansible" / "inventory.yml", private, limit=host, extravars=None,
                        ssh_config=ssh_config, playbook=SLURM_PLAYBOOK,
                        progress=lambda line: say(err, f"slurm provision {line}"))
    finally:
        vars_file.unlink(missing_ok=True)
