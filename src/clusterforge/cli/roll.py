"""`clusterforge roll`: a rolling change (driver/CUDA) in batches, each verified before the next.

Batches come from each SU's declared ``rollout_batch`` (clusterforge.plan.rollout). For every batch:
drain its nodes in each declared scheduler that this run reaches (clusterforge.schedulers: Kubernetes
through ``--kubeconfig FILE`` or ``--stack``'s own, evictions through the Eviction API with
PodDisruptionBudgets honoured; Slurm through its controller, running jobs waited for, never cancelled;
``--no-slurm`` skips it), run the site playbook on the batch alone (``--tags``, per-task progress), run the
host checks on it (the health gate), resume the nodes. A drain that is blocked is named and never forced.
A batch that fails provisioning or its checks stops the roll: the failing hosts are named, they stay
drained for the operator, and the later batches are not touched.

Exit codes: 0 every batch passed, 1 a batch failed (the roll stopped), 2 usage, 3 environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from clusterforge.cli._args import check_concerns, check_file, check_stack, check_tags, complete_concerns
from clusterforge.cli._common import Format, HostTarget, emit_json, err, format_option, load, out, say, usage_error
from clusterforge.cli._nodes import SLURM_SWITCH, node_controls
from clusterforge.targets import reach
from clusterforge.vocab import DeviceKind

if TYPE_CHECKING:
    from clusterforge.schedulers import SchedulerDriver

__all__ = ["register"]


def roll(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    target: HostTarget = typer.Option(HostTarget.ssh, "--target", "-t", help="lab | ssh"),
    ssh_config: Path | None = typer.Option(None, "--ssh-config", help="OpenSSH config (default: the lab's for lab)"),
    tags: list[str] = typer.Option(["driver", "cuda"], "--tags", help="site playbook tags to roll (repeatable)"),
    check: list[str] = typer.Option(["kernel", "driver", "cuda"], "--check", "-k", autocompletion=complete_concerns,
                                    help="host check modules that gate each batch (repeatable)"),
    su: list[int] = typer.Option([], "--su", help="only these SUs (repeatable)"),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help="cordon, drain (Eviction API), uncordon nodes"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="drain through this stack's kubeconfig"),
    slurm: bool = typer.Option(True, "--slurm/--no-slurm",
                               help="drain and resume the nodes in Slurm when the declaration asks for Slurm"),
    format: Format = format_option(),
) -> None:
    """Roll a driver/CUDA change through the servers in declared batches, stopping at a failing batch."""
    from clusterforge.operate.roll import roll_batches
    from clusterforge.plan.rollout import rollout_batches
    from clusterforge.schedulers import Reach, declared

    check_concerns(check)  # before anything is drained or provisioned
    check_tags(tags)
    check_file("--kubeconfig", kubeconfig)
    check_file("--ssh-config", ssh_config)
    if stack is not None:
        check_stack(stack)
    where = reach(HostTarget(target).value)
    spec, plan, _ = load(inventory)
    sizes = {u.id: u.rollout_batch for u in spec.scalable_units}
    servers = [(d.name, d.su, d.rack or "") for d in plan.devices
               if d.kind == DeviceKind.SERVER and d.su and (not su or d.su in su)]
    batches = rollout_batches(servers, sizes)
    if not batches:
        usage_error("no servers to roll" + (f" in SU {', '.join(map(str, su))}" if su else ""))
    if where.lab and ssh_config is None:
        from clusterforge.lab import ssh_config_path

        ssh_config = ssh_config_path(plan.cluster)
    controls = node_controls(Reach(plan, where, ssh_config, kubeconfig, stack, inventory.stem,
                                   frozenset() if slurm else frozenset({SLURM_SWITCH})))
    reached = {c.scheduler for c in controls}
    say(err, f"roll: {len(servers)} server(s) in {len(batches)} batch(es), tags {','.join(tags)},"
             f" gated by checks {','.join(check)}"
             + "".join(f"; {_drain_note(d, reached, slurm)}" for d in declared(plan)))
    outcome = roll_batches(plan, batches, controls, where, ssh_config, tags, check, lambda line: say(err, line))
    if format is Format.json:
        emit_json(outcome.report())
    elif outcome.ok:
        say(out, f"roll: {len(outcome.done)} server(s) changed in {len(batches)} batch(es), every batch healthy")
    else:
        for host, why in sorted(outcome.failed.items()):
            say(out, f"FAIL {host}: {why[:1000]}")
        later = outcome.untouched
        say(out, f"roll stopped at {outcome.stopped_at}: {len(outcome.failed)} host(s) failed:"
                 f" {', '.join(sorted(outcome.failed))}; {len(later)} server(s) in later batches untouched"
                 + (f" ({', '.join(later)})" if later else ""))
    if not outcome.ok:
        raise typer.Exit(1)


def _drain_note(driver: SchedulerDriver, reached: set[str], slurm: bool) -> str:
    """How the roll treats one declared scheduler, and why a scheduler is left alone."""
    if driver.name in reached:
        return f"drained in {driver.label}"
    skipped = driver.name == SLURM_SWITCH and not slurm
    why = f"--no-{SLURM_SWITCH}" if skipped else f"not reached (needs {driver.reached_by})"
    return f"{why}: not drained in {driver.label}"


def register(app: typer.Typer) -> None:
    app.command("roll")(roll)
