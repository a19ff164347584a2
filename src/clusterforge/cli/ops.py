"""`clusterforge doctor`: one host's health, each finding with its evidence and the fix.

Exit codes as in cli/_common.py: 0 no failing finding, 1 a failing finding, 2 usage, 3 environment.
"""

from __future__ import annotations

from pathlib import Path

import typer

from clusterforge.cli._args import check_stack
from clusterforge.cli._common import Format, HostTarget, err, format_option, load, out
from clusterforge.cli._common import say as _say
from clusterforge.targets import reach

__all__ = ["register"]

def _host_vars(inventory: Path, host: str) -> dict:
    import yaml

    from clusterforge.render import render_all

    spec, plan, _ = load(inventory)
    text = render_all(plan).get(f"ansible/host_vars/{host}.yml")
    if text is None:
        _say(err, f"error: no server {host!r} in {inventory}")
        raise typer.Exit(2)
    return yaml.safe_load(text) or {}


def doctor(
    host: str | None = typer.Argument(None, help="host to diagnose over SSH (omit with --local)"),
    inventory: Path | None = typer.Option(None, "--inventory", "-i", help="declaration: the host's planned state"),
    local: bool = typer.Option(False, "--local", help="diagnose this machine"),
    plan_host: str | None = typer.Option(None, "--as", help="with --local: the inventory host this machine is"),
    target: HostTarget = typer.Option(HostTarget.ssh, "--target", "-t",
                                        help="lab: the lab's ssh_config; ssh: the caller's"),
    ssh_config: Path | None = typer.Option(None, "--ssh-config", help="OpenSSH client config"),
    check: list[str] = typer.Option([], "--check", "-k", help="only these checks (repeatable)"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="the stack whose secrets hold the BMC password"
                                     " (bare-metal servers; default: the inventory's stem)"),
    as_json: bool = typer.Option(False, "--json", help="same as --format json"),
    format: Format = format_option(),
) -> None:
    """Walk the troubleshooting list on one host: each finding with its evidence and the fix; exit 1 on a failure."""
    from clusterforge.ops.doctor import Expect, LocalShell, Shell, SshShell, Status, diagnose, render
    from clusterforge.ops.doctor.findings import to_json
    from clusterforge.ops.doctor.run import CHECKS

    as_json = as_json or format is Format.json
    if local == (host is not None):
        _say(err, "error: give a HOST or --local")
        raise typer.Exit(2)
    from clusterforge.baremetal.doctor import BMC_CHECKS

    unknown = [c for c in check if c not in dict(CHECKS) and c not in BMC_CHECKS]
    if unknown:
        _say(err, f"error: unknown --check {', '.join(unknown)};"
                  f" choose from {', '.join([*dict(CHECKS), *BMC_CHECKS])}")
        raise typer.Exit(2)
    planned = host if host is not None else plan_host
    expect = Expect.from_host_vars(_host_vars(inventory, planned)) if inventory and planned else Expect()
    shell: Shell
    if local or host is None:
        shell = LocalShell()
    else:
        config = str(ssh_config) if ssh_config else None
        if reach(target.value).lab and config is None:
            if inventory is None:
                _say(err, "error: --target lab needs --inventory (the lab is named after the cluster)")
                raise typer.Exit(2)
            from clusterforge.lab import ssh_config_path

            config = str(ssh_config_path(load(inventory)[1].cluster))
        shell = SshShell(host, config)
    host_checks = tuple(c for c in check if c not in BMC_CHECKS)
    findings = [] if check and not host_checks else diagnose(shell, expect, only=host_checks)
    if inventory and planned and (not check or set(check) & set(BMC_CHECKS)):
        findings += _bmc_findings(inventory, planned, stack, tuple(c for c in check if c in BMC_CHECKS))
    _say(out, to_json(shell.name, findings) if as_json else render(shell.name, findings))
    if any(f.status is Status.fail for f in findings):
        raise typer.Exit(1)


def _bmc_findings(inventory: Path, host: str, stack: str | None, only: tuple[str, ...]) -> list:
    """The BMC checks of a bare-metal server (one the declaration manages through a BMC); [] for any other."""
    from clusterforge.baremetal.credentials import endpoint_for, stack_secrets
    from clusterforge.baremetal.doctor import bmc_findings
    from clusterforge.baremetal.redfish import connect
    from clusterforge.baremetal.types import BmcError
    from clusterforge.ops.doctor import Finding, Status
    from clusterforge.paths import workspace

    facts = load(inventory)[1].bmcs.get(host)
    if facts is None:
        return []
    secrets: dict[str, str] = {}
    if facts.password.pulumi is not None:
        from clusterforge.pulumi import automation

        try:
            secrets = stack_secrets(automation.open_stack(check_stack(stack or inventory.stem, inventory.name), None))
        except Exception as exc:  # noqa: BLE001 - the engine's error, as the finding's one line
            return [Finding("bmc-reachable", Status.fail, f"{host}: the stack's secrets could not be read:"
                            f" {str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__}")]
    try:
        endpoint = endpoint_for(facts, repo=workspace(), secrets=secrets)
    except BmcError as exc:
        return [Finding("bmc-reachable", Status.fail, str(exc))]
    return bmc_findings(lambda: connect(endpoint), facts, only)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
