"""`clusterforge lab up|status|down|ssh`: the cluster emulated on this machine."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from clusterforge.cli._common import Format, emit_json, err, format_option, load, out

__all__ = ["register", "topology_for"]

lab_app = typer.Typer(help="The local lab: the whole cluster as containers, namespaces, bridges and FRR.",
                      no_args_is_help=True, rich_markup_mode=None)


def topology_for(inventory: Path):
    """The lab of ``inventory``: as it runs now when it does (with the golden images `up` gave it)."""
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.lab.manager import as_running
    from clusterforge.render import render_tree

    spec, plan, _ = load(inventory)
    return as_running(lab_topology(plan, render_tree(plan)))


def _lab_errors(fn):
    from clusterforge.lab import LabError

    try:
        return fn()
    except LabError as exc:
        err.print(f"lab: {exc}", markup=False, highlight=False)
        raise typer.Exit(3) from None


@lab_app.command("up")
def up(inventory: Path = typer.Argument(..., help="inventory YAML"), format: Format = format_option()) -> None:
    """Bring the lab up (idempotent: a second run changes nothing)."""
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from clusterforge.lab import up as lab_up

    topology = topology_for(inventory)
    names = [h.name for h in topology.hosts]
    with Progress(SpinnerColumn(), TextColumn("{task.fields[host]:<24}"), BarColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=err, transient=False) as bar:
        overall = bar.add_task("starting", total=len(names), host=topology.name)
        tasks = {name: bar.add_task("waiting", total=1, host=name) for name in names}

        def progress(host: str | None, message: str) -> None:
            if host in tasks:
                done = message.startswith("sshd up")
                bar.update(tasks[host], description=message, completed=1 if done else 0)
                if done:
                    bar.advance(overall)
            else:
                bar.update(overall, description=message)

        result = _lab_errors(lambda: lab_up(topology, progress=progress))
        for name in names:
            bar.update(tasks[name], completed=1)
        bar.update(overall, completed=len(names))
    state = "changed" if result.changed else "unchanged"
    if format is Format.json:
        emit_json({"lab": topology.name, "changed": bool(result.changed), "seconds": round(result.seconds, 2),
                   "ssh_config": str(result.ssh_config), "hosts": names})
        return
    out.print(f"lab {topology.name} up ({state}) in {result.seconds:.1f} s; ssh config: {result.ssh_config}",
              markup=False, highlight=False)


@lab_app.command("status")
def status(inventory: Path = typer.Argument(..., help="inventory YAML"), format: Format = format_option()) -> None:
    """One row per host: state, addresses, whether sshd answers."""
    from rich.table import Table

    from clusterforge.lab import status as lab_status

    topology = topology_for(inventory)
    rows = _lab_errors(lambda: lab_status(topology))
    healthy = all(row.state == "running" and row.sshd for row in rows)
    if format is Format.json:
        emit_json({"lab": topology.name, "ok": healthy, "hosts": [
            {"host": r.host, "kind": r.kind, "state": r.state, "management": r.management_ip,
             "addresses": r.addresses, "sshd": bool(r.sshd)} for r in rows]})
        raise typer.Exit(0 if healthy else 1)
    table = Table(title=f"lab {topology.name}")
    for col in ("host", "kind", "state", "management", "addresses", "sshd"):
        table.add_column(col)
    for row in rows:
        addresses = " ".join(f"{dev}={','.join(ips)}" for dev, ips in sorted(row.addresses.items()) if ips)
        table.add_row(row.host, row.kind, row.state, row.management_ip or "", addresses, "yes" if row.sshd else "no")
    out.print(table)
    if any(row.state != "running" or not row.sshd for row in rows):
        raise typer.Exit(1)


@lab_app.command("down")
def down(inventory: Path = typer.Argument(..., help="inventory YAML"), format: Format = format_option()) -> None:
    """Remove every container, namespace, bridge, veth, mount and overlay of the lab."""
    from clusterforge.lab import down as lab_down

    topology = topology_for(inventory)
    result = _lab_errors(lambda: lab_down(topology.name))
    if format is Format.json:
        emit_json({"lab": topology.name, "seconds": round(result.seconds, 2), "containers": len(result.stopped),
                   "namespaces": len(result.netns), "links": len(result.links), "mounts": len(result.mounts)})
        return
    out.print(f"lab {topology.name} down in {result.seconds:.1f} s: {len(result.stopped)} containers,"
              f" {len(result.netns)} namespaces, {len(result.links)} links, {len(result.mounts)} mounts removed",
              markup=False, highlight=False)


from clusterforge.cli.lab_image import image  # noqa: E402 - `lab image` between `down` and `ssh` in the help

lab_app.command("image")(image)


@lab_app.command("ssh", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def ssh(ctx: typer.Context, inventory: Path = typer.Argument(..., help="inventory YAML"),
        host: str = typer.Argument(..., help="host name, e.g. su01-r01-gpu01"),
        args: list[str] | None = typer.Argument(None, metavar="ARGS",
                                                help="a command to run on the host instead of a login shell")) -> None:
    """SSH into a lab host (strict host key checking, the lab's own key); extra args run remotely."""
    from clusterforge.lab import ssh_command

    topology = topology_for(inventory)
    if host not in {h.name for h in topology.hosts}:
        err.print(f"no host {host!r} in lab {topology.name}", markup=False)
        raise typer.Exit(2)
    argv = ssh_command(topology.name, host, [*(args or []), *ctx.args])
    os.execvp(argv[0], argv)


def register(app: typer.Typer) -> None:
    app.add_typer(lab_app, name="lab")
