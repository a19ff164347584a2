"""`clusterforge replace HOST`: an RMA — provision and verify one host again, its identity unchanged.

The host's name, addresses and role come from the declaration, so the replacement is the same
node to the cluster. On the lab target the host is first re-imaged (back to the base image, a new
machine-id and SSH host key, as a swapped machine has); on real hosts the operator has swapped
the machine and put its new host key in known_hosts (never trusted on first use). Then the site
playbook runs on that host alone, with per-task progress, and the host checks run on it. The node is
first drained in each declared scheduler this run reaches (clusterforge.schedulers: Kubernetes with
``--kubeconfig`` or ``--stack``, Eviction API, PodDisruptionBudgets honoured; Slurm through its controller,
its jobs waited for, never cancelled; ``--no-slurm`` skips it); a blocked drain stops the replacement.
After the health gate each scheduler puts its own parts back on the new machine (Slurm: playbooks/slurm.yml,
slurmd and MUNGE with the stack's key: ``--stack``, default the inventory's stem) and takes the node back.

Exit codes: 0 provisioned and every check passed, 1 provisioning or a check failed, 2 usage,
3 the lab or the checks cannot run.
"""

from __future__ import annotations

from pathlib import Path

import typer

from clusterforge.cli._args import check_concerns, check_stack, check_tags, complete_concerns
from clusterforge.cli._common import Format, HostTarget, emit_json, err, format_option, load, out, say, usage_error
from clusterforge.cli._nodes import SLURM_SWITCH, node_controls
from clusterforge.targets import reach
from clusterforge.vocab import DeviceKind

__all__ = ["register"]


def replace(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    host: str = typer.Argument(..., help="the server being replaced, e.g. su01-r01-gpu02"),
    target: HostTarget = typer.Option(HostTarget.lab, "--target", "-t",
                                      help="lab (re-image the lab host) | ssh (real hosts)"),
    ssh_config: Path | None = typer.Option(None, "--ssh-config", help="OpenSSH config for the ssh target"),
    tags: list[str] = typer.Option([], "--tags", help="only these site playbook tags (repeatable)"),
    check: list[str] = typer.Option([], "--check", "-k", autocompletion=complete_concerns,
                                    help="only these host check modules (repeatable)"),
    json_path: Path | None = typer.Option(None, "--json", help="write the host checks' JSON report here"),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help="drain the node first, uncordon it after"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="drain through this stack's kubeconfig"),
    slurm: bool = typer.Option(True, "--slurm/--no-slurm",
                               help="drain, re-converge and resume the node in Slurm when the declaration asks for it"),
    format: Format = format_option(),
) -> None:
    """Re-provision and re-verify one replaced host with its planned identity (RMA)."""
    from clusterforge.operate.replace import ReplaceStopped, replace_host
    from clusterforge.schedulers import Reach

    check_concerns(check)  # before the host is re-imaged or provisioned
    check_tags(tags)
    if stack is not None:
        check_stack(stack)
    where = reach(HostTarget(target).value)
    spec, plan, _ = load(inventory)
    device = next((d for d in plan.devices if d.name == host), None)
    if device is None or device.kind not in (DeviceKind.SERVER, DeviceKind.STORAGE):
        usage_error(f"not a server of {inventory}: {host}")
    addresses = ", ".join(f"{i.name} {i.ip}" for i in device.interfaces if i.ip)
    say(err, f"replace {host}: identity from the declaration: {addresses}")
    controls = node_controls(Reach(plan, where, ssh_config, kubeconfig, stack, inventory.stem,
                                   frozenset() if slurm else frozenset({SLURM_SWITCH})))
    try:
        done = replace_host(plan, host, where, ssh_config, controls, tags, check, json_path,
                            lambda line: say(err, line))
    except ReplaceStopped as exc:
        say(out if exc.result else err, exc.line)
        raise typer.Exit(exc.code) from None
    _report(done, format)


def _report(done, format: Format) -> None:
    """What `replace` prints: the provisioning failure, or the host checks and the verdict; exit 1 on a failure."""
    from clusterforge.cli._tables import results_table

    host, result, checked = done.host, done.provision, done.checked
    if checked is None:
        failed = {**result.failed_hosts, **result.unreachable_messages}
        if format is Format.json:
            emit_json({"host": host, "ok": False, "provision": {"status": result.status, "failed": failed}})
            raise typer.Exit(1)
        for name, why in sorted(failed.items()):
            say(out, f"FAIL provision {name}: {why}")
        say(out, f"replace {host}: provisioning failed ({result.status}, rc {result.rc}; {result.artifact_dir})")
        raise typer.Exit(1)
    if format is Format.json:
        emit_json({"host": host, "ok": checked.ok, "provision": {"status": result.status,
                   "changed": result.changed_per_host.get(host, 0), "seconds": round(result.duration_s, 1)},
                   "checks": {"passed": checked.passed, "failed": checked.failed, "skipped": checked.skipped,
                              "simulated": checked.simulated,
                              "failures": checked.failures}})
        if not checked.ok:
            raise typer.Exit(1)
        return
    out.print(results_table(checked))
    for line in checked.failures:
        say(out, f"FAIL {line}")
    if not checked.ok:
        raise typer.Exit(1)
    say(out, f"replace {host}: provisioned and verified ({checked.passed} checks passed); name and addresses"
             " as declared. Run `clusterforge up` to record the new machine in the stack.")


def register(app: typer.Typer) -> None:
    app.command("replace")(replace)
