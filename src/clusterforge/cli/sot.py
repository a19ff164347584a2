"""`clusterforge sot push | pull`: the Plan in a Nautobot source of truth, and as-built facts back.

The API token comes from the environment (CLUSTERFORGE_SOT_TOKEN, else NAUTOBOT_TOKEN, or the
variable --token-env names) or from a Pulumi stack secret (--token-from-stack STACK reads the
stack's secret config `clusterforge:sotToken`); it is never printed or written anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from clusterforge.cli._common import Format, emit_json, err, format_option, load, say, usage_error
from clusterforge.cli._common import out as stdout
from clusterforge.cli._output import out_arg, write_out

__all__ = ["register"]

sot_app = typer.Typer(help="Source of truth (Nautobot): push the Plan, pull as-built facts.", no_args_is_help=True,
                      rich_markup_mode=None)
TOKEN_ENVS = ("CLUSTERFORGE_SOT_TOKEN", "NAUTOBOT_TOKEN")
SECRET_KEY = "clusterforge:sotToken"


def _token(token_env: str | None, stack: str | None, state_dir: Path | None) -> str:
    if stack:
        from clusterforge.cli._args import check_stack
        from clusterforge.pulumi import automation

        check_stack(stack)
        try:
            handle = automation.open_stack(stack, None, automation.Backend.resolve(state_dir, None))
            value = handle.get_all_config().get(SECRET_KEY)
        except automation.EngineMissing as exc:
            say(err, f"error: {exc}")
            raise typer.Exit(3) from None
        if value is None or not value.value:
            usage_error(f"stack {stack} has no {SECRET_KEY} (set it: pulumi config set --secret {SECRET_KEY})")
        return value.value
    names = (token_env,) if token_env else TOKEN_ENVS
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    usage_error(f"no API token: set {' or '.join(names)}, or pass --token-from-stack STACK")
    return ""


def _client(url: str, token_env: str | None, stack: str | None, state_dir: Path | None):
    from clusterforge.sot import NautobotClient, SotError

    try:
        return NautobotClient(url, _token(token_env, stack, state_dir))
    except SotError as exc:
        usage_error(str(exc))


def _url_arg(raw: str) -> str:
    """--url checked before the declaration is read or anything is asked of a server."""
    from clusterforge.sot.client import SotError, check_url

    try:
        return check_url(raw)
    except SotError as exc:
        raise typer.BadParameter(str(exc)) from None


URL = typer.Option(..., "--url", help="Nautobot base URL, e.g. https://nautobot.example.net", parser=_url_arg)
TOKEN_ENV = typer.Option(None, "--token-env", help="environment variable holding the API token "
                         "[default: CLUSTERFORGE_SOT_TOKEN, then NAUTOBOT_TOKEN]")
FROM_STACK = typer.Option(None, "--token-from-stack",
                          help=f"read the token from this Pulumi stack's secret {SECRET_KEY}")
STATE_DIR = typer.Option(None, "--state-dir", envvar="CLUSTERFORGE_STATE_DIR",
                         help="Pulumi state dir (with --token-from-stack)")


@sot_app.command("push")
def push_cmd(inventory: Path = typer.Argument(..., help="inventory YAML"), url: str = URL,
             token_env: str | None = TOKEN_ENV, token_from_stack: str | None = FROM_STACK,
             state_dir: Path | None = STATE_DIR, format: Format = format_option()) -> None:
    """Make the server hold the Plan: location, racks, device types, devices, interfaces, cables, prefixes,
    addresses, power panels/feeds and PDUs. Idempotent; objects of a removed SU are deleted."""
    from clusterforge.export.devicetypes import device_types
    from clusterforge.render.switches.facts import fabric_facts
    from clusterforge.sot import SotError
    from clusterforge.sot.desired import cluster_tag, desired
    from clusterforge.sot.sync import push

    spec, plan, _ = load(inventory)
    client = _client(url, token_env, token_from_stack, state_dir)
    nos = {name: facts.nos for name, facts in fabric_facts(plan).items()}
    try:
        report = push(client, desired(spec, plan, device_types(spec, plan), nos), cluster_tag(plan))
    except SotError as exc:
        say(err, f"sot push: {exc}")
        raise typer.Exit(3) from None
    if format is Format.json:
        emit_json({"cluster": plan.cluster, **report.to_dict(), "changes": report.changes})
        return
    for action, kind, key in report.changes:
        say(stdout, f"{action} {kind} {key}")
    say(stdout, f"sot push {plan.cluster}: {sum(report.created.values())} created, {sum(report.updated.values())}"
                f" updated, {sum(report.deleted.values())} deleted, {sum(report.unchanged.values())} unchanged")


@sot_app.command("pull")
def pull_cmd(inventory: Path = typer.Argument(..., help="inventory YAML"), url: str = URL,
             out_dir: Path = typer.Option(..., "--out", "-o", help="directory for assets-asbuilt.csv", parser=out_arg),
             token_env: str | None = TOKEN_ENV, token_from_stack: str | None = FROM_STACK,
             state_dir: Path | None = STATE_DIR, format: Format = format_option()) -> None:
    """Read serials, asset tags and status back into the asset register (assets-asbuilt.csv)."""
    from clusterforge.sot import SotError
    from clusterforge.sot.pull import as_built, as_built_register

    spec, plan, _ = load(inventory)
    client = _client(url, token_env, token_from_stack, state_dir)
    try:
        facts = as_built(client, plan)
    except SotError as exc:
        say(err, f"sot pull: {exc}")
        raise typer.Exit(3) from None
    write_out(out_dir, {"assets-asbuilt.csv": as_built_register(spec, plan, facts)})
    if format is Format.json:
        emit_json({"cluster": plan.cluster, "file": str(out_dir / "assets-asbuilt.csv"), "devices": facts})
        return
    say(stdout, f"wrote {out_dir / 'assets-asbuilt.csv'}: {len(facts)} devices known to the server")


def register(app: typer.Typer) -> None:
    app.add_typer(sot_app, name="sot")
