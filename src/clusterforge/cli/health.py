"""`clusterforge health`: one verdict per GPU server (PASS, WARN, CRITICAL, UNKNOWN) and the action the
ladder gives it (none, drain, reset_gpu, reboot, reimage, rma), from the doctor's checks, this boot's
kernel log (Xid, EDAC), the node's daemons, the host checks of `verify` and firing alerts (`--alerts`,
Alertmanager's /api/v2/alerts JSON). Changes nothing. The library: clusterforge.health.

Exit codes by the worst verdict: 0 PASS, 1 WARN or CRITICAL, 3 UNKNOWN (a check could not run);
2 usage.
"""

from __future__ import annotations

from pathlib import Path

import typer

from clusterforge.cli._args import check_file, check_stack
from clusterforge.cli._common import Format, HostTarget, emit_json, err, format_option, load, out, say, usage_error
from clusterforge.targets import reach as reach_named

__all__ = ["health_reach", "read_alerts_option", "register"]


def health_reach(inventory: Path, target: HostTarget, ssh_config: Path | None, stack: str | None, verify: bool):
    """The declaration loaded (FILE:LINE:COL errors first) and how its nodes are reached."""
    from clusterforge.health.gather import Reach

    if stack is not None:
        check_stack(stack)
    check_file("--ssh-config", ssh_config)
    spec, plan, _ = load(inventory)
    return spec, Reach(plan, reach_named(HostTarget(target).value), ssh_config, use_verify=verify)


def read_alerts_option(path: Path | None):
    if path is None:
        return None
    from clusterforge.health.gather import read_alerts

    try:
        return read_alerts(path)
    except ValueError as exc:
        usage_error(f"--alerts {exc}")


def health(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="the stack the cluster was brought up as"
                                     " (health reads nothing from it: optional)"),
    target: HostTarget = typer.Option(HostTarget.lab, "--target", "-t", help="lab | ssh (real hosts)"),
    ssh_config: Path | None = typer.Option(None, "--ssh-config", help="OpenSSH config (default: the lab's for lab)"),
    node: list[str] = typer.Option([], "--node", "-n", help="only this GPU server (repeatable)"),
    alerts: Path | None = typer.Option(None, "--alerts", help="firing alerts: Alertmanager's /api/v2/alerts JSON"),
    verify: bool = typer.Option(True, "--verify/--no-verify", help="also run verify's network and RoCE checks"),
    all_evidence: bool = typer.Option(False, "--all", help="list every evidence, not only what makes the verdict"),
    format: Format = format_option(),
) -> None:
    """One verdict and one action per GPU server, with its evidence; exit by the worst verdict."""
    from clusterforge.health.gather import gather, gpu_servers
    from clusterforge.health.report import document, exit_code, lines

    _, reach = health_reach(inventory, target, ssh_config, stack, verify)
    unknown = [n for n in node if n not in gpu_servers(reach.plan)]
    if unknown:
        usage_error(f"not a GPU server of {inventory}: {', '.join(u[:80] for u in unknown)}")
    try:
        nodes = gather(reach, node or None, alerts=read_alerts_option(alerts), say=lambda line: say(err, line))
    except ValueError as exc:
        usage_error(f"--alerts {alerts}: {exc}")
    if format is Format.json:
        emit_json(document(nodes))
    else:
        for line in lines(nodes, all_evidence):
            say(out, line)
    raise typer.Exit(exit_code(nodes))


def register(app: typer.Typer) -> None:
    from clusterforge.cli import remediate

    app.command("health")(health)
    remediate.register(app)
