"""`clusterforge provision`: the site playbook on the declared servers, outside Pulumi, with per-task progress.

What `up` runs per SU (HostProvision), for a host or a few: each host's finished tasks stream to
stderr as they happen (changed and failed ones at once, the rest every tenth), then the per-host
totals. Exit codes: 0 every host converged, 1 a host failed or was unreachable, 2 usage.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer

from clusterforge.cli._args import check_tags, inventory_groups
from clusterforge.cli._common import Format, HostTarget, emit_json, err, format_option, load, out, say, usage_error
from clusterforge.targets import reach

__all__ = ["register"]


def provision(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    target: HostTarget = typer.Option(HostTarget.lab, "--target", "-t", help="lab (the lab's ssh_config) | ssh"),
    ssh_config: Path | None = typer.Option(None, "--ssh-config", help="OpenSSH config (default: the lab's for lab)"),
    limit: list[str] = typer.Option([], "--limit", "-l", help="only these hosts or groups (repeatable)"),
    tags: list[str] = typer.Option([], "--tags", help="only these site playbook tags (repeatable)"),
    format: Format = format_option(),
) -> None:
    """Run the site playbook (Ansible roles) on the declared servers, streaming per-host task progress."""
    from clusterforge.provision import run_site
    from clusterforge.render import render_all, write_tree

    check_tags(tags)
    spec, plan, _ = load(inventory)
    files = render_all(plan)
    names = {d.name for d in plan.devices if d.kind in ("server", "storage")} | inventory_groups(
        files["ansible/inventory.yml"])
    unknown = [h for h in limit if h not in names]
    if unknown:
        usage_error(f"not a server or group of {inventory}'s inventory: {', '.join(unknown)}")
    where = reach(HostTarget(target).value)
    if where.lab and ssh_config is None:
        from clusterforge.lab import ssh_config_path

        ssh_config = ssh_config_path(plan.cluster)
    with tempfile.TemporaryDirectory(prefix="cf-provision-") as tmp:
        rendered = Path(tmp) / "rendered"
        write_tree(rendered, files)
        result = run_site(rendered / "ansible" / "inventory.yml", Path(tmp) / "runner", limit=list(limit) or None,
                          tags=list(tags) or None,
                          extravars={"cf_lab": True} if where.lab else None,
                          ssh_config=ssh_config, progress=lambda line: say(err, f"provision {line}"))
    failed = {**result.failed_hosts, **{h: f"unreachable: {m}" for h, m in result.unreachable_messages.items()}}
    if format is Format.json:
        emit_json({"ok": result.ok, "status": result.status, "seconds": round(result.duration_s, 1),
                   "changed": result.changed_per_host, "failed": failed})
    else:
        for host in sorted(result.stats):
            c = result.stats[host]
            say(out, f"{host}: ok={c['ok']} changed={c['changed']} failed={c['failed']} unreachable={c['unreachable']}")
        for host, why in sorted(failed.items()):
            say(out, f"FAIL {host}: {why}")
        say(out, f"provision: {result.status} in {result.duration_s:.0f} s")
    if not result.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("provision")(provision)
