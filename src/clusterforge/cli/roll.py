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

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from clusterforge.cli._args import check_concerns, check_stack, check_tags, complete_concerns
from clusterforge.cli._common import Format, emit_json, err, format_option, load, out, say, usage_error
from clusterforge.cli.ops import DoctorTarget as HostTarget
from clusterforge.targets import reach
from clusterforge.vocab import DeviceKind

if TYPE_CHECKING:
    from clusterforge.schedulers import NodeControl, Reach

__all__ = ["node_controls", "register"]

DRAIN_TIMEOUT_S = 600.0
SLURM_SWITCH = "slurm"  # the driver `--no-slurm` turns off


def node_controls(reach: Reach) -> tuple[NodeControl, ...]:
    """The live schedulers a command drains and resumes nodes through (clusterforge.schedulers.controls);
    one that cannot be reached is exit 3, a setting for one the declaration does not run is exit 2."""
    from clusterforge.schedulers import Unreachable, controls

    try:
        return controls(reach)
    except Unreachable as exc:
        if exc.usage:
            usage_error(str(exc))
        say(err, f"error: {exc}")
        raise typer.Exit(3) from None


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
    from clusterforge.plan.rollout import rollout_batches
    from clusterforge.provision import run_site
    from clusterforge.render import render_all, write_tree
    from clusterforge.schedulers import DrainRefused, Reach, ResumeFailed, declared, drain_nodes, resume_nodes
    from clusterforge.verify.runner import VerifyError, run_checks

    check_concerns(check)  # before anything is drained or provisioned
    check_tags(tags)
    if stack is not None:
        check_stack(stack)
    where = reach(HostTarget(target).value)
    report: dict = {"batches": [], "ok": True}
    spec, plan, _ = load(inventory)
    sizes = {u.id: u.rollout_batch for u in spec.scalable_units}
    servers = [(d.name, d.su, d.rack) for d in plan.devices
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
             + "".join(f"; {'drained' if d.name in reached else 'not drained'} in {d.label}" for d in declared(plan)))
    with tempfile.TemporaryDirectory(prefix="cf-roll-") as tmp:
        rendered = Path(tmp) / "rendered"
        write_tree(rendered, render_all(plan))
        done: list[str] = []
        for number, batch in enumerate(batches, 1):
            label = f"batch {number}/{len(batches)} (SU {batch.su} #{batch.index}: {', '.join(batch.hosts)})"
            say(err, f"roll: {label}: starting")
            try:
                drain_nodes(controls, batch.hosts, f"clusterforge roll batch {number}", DRAIN_TIMEOUT_S,
                            say=lambda line: say(err, line))
            except DrainRefused as exc:
                _stop(report, format, batch, label, {exc.node: f"drain: {exc}"}, batches[number:])
            result = run_site(rendered / "ansible" / "inventory.yml", Path(tmp) / "runner", limit=list(batch.hosts),
                              tags=list(tags), extravars={"cf_lab": True} if where.lab else None,
                              ssh_config=ssh_config, progress=lambda line: say(err, f"provision {line}"))
            if not result.ok:
                _stop(report, format, batch, label, {**result.failed_hosts, **{h: f"unreachable: {m}" for h, m in
                                                       result.unreachable_messages.items()}}
                      or {h: f"ansible-runner {result.status}" for h in batch.hosts}, batches[number:])
            try:
                gate = run_checks(rendered, where.name, list(batch.hosts), ssh_config, None, concerns=list(check))
            except VerifyError as exc:
                _stop(report, format, batch, label, {h: f"checks could not run: {exc}" for h in batch.hosts},
                      batches[number:])
            if not gate.ok:
                failed = {h: "; ".join([*([f"unreachable: {r.unreachable}"] if r.unreachable else []),
                                        *(f"{f['test']}: {f['message']}" for f in r.failures)])
                          for h, r in gate.per_host.items() if r.failed}
                _stop(report, format, batch, label, failed or {"(run)": "; ".join(gate.errors)}, batches[number:])
            try:
                resume_nodes(controls, batch.hosts, say=lambda line: say(err, line))
            except ResumeFailed as exc:
                _stop(report, format, batch, label, {exc.node: str(exc)}, batches[number:])
            done += batch.hosts
            report["batches"].append({"su": batch.su, "index": batch.index, "hosts": list(batch.hosts),
                                      "healthy": True, "checks_passed": gate.passed})
            say(err, f"roll: {label}: healthy ({gate.passed} checks passed)")
    if format is Format.json:
        emit_json(report)
        return
    say(out, f"roll: {len(done)} server(s) changed in {len(batches)} batch(es), every batch healthy")


def _stop(report: dict, format: Format, batch, label: str, failed: dict[str, str], untouched: list) -> None:
    later = [h for b in untouched for h in b.hosts]
    if format is Format.json:
        report["batches"].append({"su": batch.su, "index": batch.index, "hosts": list(batch.hosts), "healthy": False,
                                  "failed": failed})
        emit_json({**report, "ok": False, "untouched": later})
        raise typer.Exit(1)
    for host, why in sorted(failed.items()):
        say(out, f"FAIL {host}: {why[:1000]}")
    say(out, f"roll stopped at {label}: {len(failed)} host(s) failed: {', '.join(sorted(failed))};"
             f" {len(later)} server(s) in later batches untouched" + (f" ({', '.join(later)})" if later else ""))
    raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("roll")(roll)
