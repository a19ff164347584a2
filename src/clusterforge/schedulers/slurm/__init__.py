"""The Slurm driver: render/slurm's files, playbooks/slurm.yml through the stack's Slurm step, the checks
of verify/slurm_checks through the controller, nodes drained and resumed with scontrol, partitions and
the accounts' GPU limits as its queues."""

from __future__ import annotations

from clusterforge.plan import Plan
from clusterforge.render.slurm import SLURM_DIR, slurm_files
from clusterforge.schedulers.driver import Application, LayerChecks, Queue, Reach, Rendering, SchedulerDriver
from clusterforge.schedulers.slurm.control import NAME, SlurmControl
from clusterforge.schedulers.slurm.expected import slurm_expected, slurm_wanted
from clusterforge.schedulers.slurm.remote import controller_runner

__all__ = ["SLURM"]

SIMULATED_GPUS = "simulated (placeholder files, no GPU devices)"


def _queues(plan: Plan) -> tuple[Queue, ...]:
    if plan.slurm is None:
        return ()
    partitions = tuple(Queue(p.name, "partition", None, p.nodes) for p in plan.slurm.partitions)
    return partitions + tuple(Queue(a.name, "account", a.gpus) for a in plan.slurm.accounts)


def _control(reach: Reach) -> SlurmControl | None:
    plan = reach.plan
    if NAME in reach.skip or not slurm_wanted(plan):
        return None
    assert plan.slurm is not None
    return SlurmControl(controller_runner(plan, reach.target, reach.ssh_config),
                        frozenset(n.name for n in plan.slurm.nodes), reach.target, reach.ssh_config,
                        reach.secrets_stack)


def _checks(reach: Reach) -> LayerChecks | None:
    """The Slurm checks through slurmctld on the controller; not from `--target local` (one host)."""
    plan = reach.plan
    if NAME in reach.skip or reach.target.local or not slurm_wanted(plan):
        return None
    assert plan.slurm is not None
    from clusterforge.verify.slurm_checks import run_slurm_checks

    simulated = plan.slurm.simulated
    title = "slurm layer" + (" (SIMULATED GPUs: placeholder files, no GPU devices)" if simulated else "")
    facts = {"gpus": SIMULATED_GPUS if simulated else "devices"}
    run = controller_runner(plan, reach.target, reach.ssh_config)
    rc, stdout, stderr = run("scontrol ping")
    if rc != 0 or "UP" not in stdout:
        why = (stderr or stdout).strip().splitlines()[-1:] or [f"exit {rc}"]
        return LayerChecks(None, f"slurmctld does not answer on the controller ({why[0][:300]})", title, facts)
    return LayerChecks(tuple(run_slurm_checks(run, slurm_expected(plan), simulated=simulated)), "", title, facts)


SLURM = SchedulerDriver(
    name=NAME, label="Slurm",
    rendering=Rendering(SLURM_DIR, slurm_files, "cf_slurm"),
    application=Application("slurm.yml", ("slurm_controller", "slurm_node"), "clusterforge:slurm:Slurm"),
    queues=_queues, control=_control, checks=_checks,
    reached_by="its controller over SSH (on unless --no-slurm)",
)
