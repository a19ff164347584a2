"""`clusterforge health`: one verdict per GPU server (PASS, WARN, CRITICAL, UNKNOWN) and the action the
ladder gives it (none, drain, reset_gpu, reboot, reimage, rma), from the doctor's checks, this boot's
kernel log (Xid, EDAC), the node's daemons, the host checks of `verify` and firing alerts: read from the
declaration's Alertmanager when it plans monitoring (or `--alertmanager URL`; `--alertmanager none` reads none;
one that cannot be read makes the verdicts UNKNOWN, never PASS), or from a file (`--alerts`, Alertmanager's
/api/v2/alerts JSON, for offline use). Changes nothing. The library: clusterforge.health.

Exit codes by the worst verdict: 0 PASS, 1 WARN or CRITICAL, 3 UNKNOWN (a check could not run);
2 usage.
"""

from __future__ import annotations

from pathlib import Path

import typer

from clusterforge.cli._args import check_file, check_stack
from clusterforge.cli._common import Format, HostTarget, emit_json, err, format_option, load, out, say, usage_error
from clusterforge.targets import reach as reach_named

__all__ = ["ALERTMANAGER_HELP", "health_reach", "read_alerts_option", "register"]

NO_ALERTMANAGER = "none"
ALERTMANAGER_HELP = ("read firing alerts from this Alertmanager (http[s]://HOST:PORT) [default: the declaration's,"
                     " when it plans monitoring]; `none`: read none")


def health_reach(inventory: Path, target: HostTarget, ssh_config: Path | None, stack: str | None, verify: bool,
                 alertmanager: str | None = None, alerts: Path | None = None):
    """The declaration loaded (FILE:LINE:COL errors first) and how its nodes are reached: over SSH, and the
    Alertmanager whose firing alerts are read (`alertmanager`, else the planned one; none with an `alerts` file
    or `alertmanager` none)."""
    from clusterforge.health.alertmanager import alertmanager_url, planned_url
    from clusterforge.health.gather import Reach

    if stack is not None:
        check_stack(stack)
    check_file("--ssh-config", ssh_config)
    if alerts is not None and alertmanager is not None:
        usage_error("--alerts FILE and --alertmanager: give one source of firing alerts")
    url = None
    if alertmanager is not None and alertmanager != NO_ALERTMANAGER:
        try:
            url = alertmanager_url(alertmanager)
        except ValueError as exc:
            usage_error(f"--alertmanager: {exc}")
    spec, plan, _ = load(inventory)
    if alertmanager is None and alerts is None:
        url = planned_url(plan)
        if url is None:
            say(err, f"health: {inventory} plans no monitoring: no firing alerts are read (--alerts FILE reads them"
                     " from a file)")
    return spec, Reach(plan, reach_named(HostTarget(target).value), ssh_config, use_verify=verify,
                       alertmanager=url)


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
    alerts: Path | None = typer.Option(None, "--alerts", help="firing alerts from this file (Alertmanager's"
                                       " /api/v2/alerts JSON), not from an Alertmanager"),
    alertmanager: str | None = typer.Option(None, "--alertmanager", help=ALERTMANAGER_HELP),
    verify: bool = typer.Option(True, "--verify/--no-verify", help="also run verify's network and RoCE checks"),
    all_evidence: bool = typer.Option(False, "--all", help="list every evidence, not only what makes the verdict"),
    format: Format = format_option(),
) -> None:
    """One verdict and one action per GPU server, with its evidence; exit by the worst verdict."""
    from clusterforge.health.gather import gather, gpu_servers
    from clusterforge.health.report import document, exit_code, lines

    _, reach = health_reach(inventory, target, ssh_config, stack, verify, alertmanager, alerts)
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
