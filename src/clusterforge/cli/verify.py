"""`clusterforge verify`: the testinfra host checks, then each declared scheduler's layer checks.

Each host check ends passed, failed, SIMULATED (on the lab: the planned fact needs a part the lab simulates, and
the output says which) or skipped (nothing planned to check; on the lab, a fact it cannot read, with the reason);
the four are counted apart. On a real target (ssh, local) a planned fact that cannot be checked is a failure
naming the host, the fact and why.

Exit codes as in clusterforge.cli._common: 0 ok (no failure: simulated and skipped checks do not fail), 1 the
cluster (or declaration) is wrong, or a planned fact could not be checked outside the lab, 2 usage error,
3 environment problem (checks cannot run).
"""

from __future__ import annotations

import tempfile
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from clusterforge.cli._args import check_stack
from clusterforge.cli._common import Format, emit_json, err, format_option, load, out, say, usage_error
from clusterforge.cli._tables import check_names, print_layer, results_table, throughput_table
from clusterforge.targets import reach
from clusterforge.vocab import DeviceKind

__all__ = ["VerifyTarget", "register"]


class VerifyTarget(str, Enum):
    lab = "lab"
    ssh = "ssh"
    local = "local"


def verify(
    inventory: Path = typer.Argument(..., help="inventory YAML (the cluster declaration)"),
    target: VerifyTarget = typer.Option(VerifyTarget.lab, "--target", "-t",
                                        help="lab: the local lab's hosts; ssh: the real hosts; local: this machine"),
    host: list[str] = typer.Option([], "--host", "-H", help="check only this host (repeatable); local: required"),
    json_path: Path | None = typer.Option(None, "--json", help="write the JSON report here"),
    ssh_config: Path | None = typer.Option(None, "--ssh-config", help="OpenSSH config (default: the lab's for lab)"),
    check: list[str] = typer.Option(
        [], "--check", "-k", autocompletion=lambda incomplete: check_names(incomplete),
        help="only these check modules (repeatable): kernel, driver, cuda, fabricmanager, container_runtime, "
             "network, roce, mounts, tiers, storage, time"),
    workers: int | None = typer.Option(
        None, "--workers", "-n", min=1,
        help="parallel pytest workers (default: one per 8 hosts, at most one per CPU, 8)"),
    show_skips: bool = typer.Option(False, "--show-skips",
                                    help="also list every skipped and SIMULATED check with its reason"),
    stack: str | None = typer.Option(
        None, "--stack", "-s",
        help="check the Kubernetes layer through this stack's kubeconfig [default: the inventory's stem]"),
    kubernetes: bool = typer.Option(True, "--kubernetes/--no-kubernetes",
                                    help="check the Kubernetes layer when the declaration has control nodes"),
    slurm: bool = typer.Option(True, "--slurm/--no-slurm",
                               help="check the Slurm layer when the declaration asks for it"),
    format: Format = format_option(),
) -> None:
    """Check hosts against the rendered inventory with testinfra, then the Kubernetes layer (nodes, GPU
    counts, RuntimeClass, device-plugin DaemonSet, team quotas, a live quota probe) and the Slurm layer.

    Counts passed, failed, SIMULATED (the lab simulates the part: said which) and skipped checks apart. Exit 0
    with no failure; 1 on any failure, including a planned fact that cannot be checked outside the lab (ssh,
    local); 2 usage error; 3 the checks cannot run."""
    from clusterforge.render import render_all, write_tree
    from clusterforge.verify.runner import CONCERNS, VerifyError, run_checks

    unknown = [c for c in check if c not in CONCERNS]
    if unknown:
        usage_error(f"unknown --check {', '.join(unknown)}; choose from {', '.join(CONCERNS)}")
    if stack is not None:
        check_stack(stack)
    if reach(target.value).local and len(host) != 1:
        usage_error("--target local checks this machine against one inventory host: pass --host NAME")
    spec, plan, _ = load(inventory)
    servers = {d.name for d in plan.devices if d.kind in (DeviceKind.SERVER, DeviceKind.STORAGE)}
    missing = [h for h in host if h not in servers]
    if missing:
        usage_error(f"not a server of {inventory}: {', '.join(missing)}")
    with tempfile.TemporaryDirectory(prefix="cf-verify-render-") as tmp:
        rendered = Path(tmp) / "rendered"
        write_tree(rendered, render_all(plan))
        try:
            result = run_checks(rendered, target.value, list(host) or None, ssh_config, json_path,
                                concerns=list(check) or None, workers=workers)
        except VerifyError as exc:
            say(err, f"verify: {exc}")
            raise typer.Exit(3) from None
    from clusterforge.schedulers import SCHEDULERS, Reach

    turned_off = frozenset(name for name, on in (("kubernetes", kubernetes), ("slurm", slurm)) if not on)
    schedulers = Reach(plan, reach(target.value), ssh_config, stack=stack, default_stack=inventory.stem,
                       skip=turned_off)
    layers = {driver.name: driver.checks(schedulers) for driver in SCHEDULERS.values()}
    layers_ok = all(layer is None or layer.ok for layer in layers.values())
    if format is Format.json:
        emit_json({**result.to_dict(), **{name: None if layer is None else {
            "checks": [c.to_dict() for c in layer.checks or ()], "not_checked": layer.why, **layer.facts}
            for name, layer in layers.items()}})
        raise typer.Exit(0 if result.ok and layers_ok else 1)
    _print_result(result, layers, {d.name: d.kind for d in plan.devices}, show_skips, json_path)
    if not result.ok or not layers_ok:
        raise typer.Exit(1)


def _print_result(result: Any, layers: dict[str, Any], kinds: dict[str, str], show_skips: bool,
                  json_path: Path | None) -> None:
    out.print(results_table(result, kinds))
    figures = throughput_table(result)
    if figures is not None:
        out.print(figures)
    for host_name, hr in result.per_host.items():
        if hr.unreachable is not None:
            say(out, f"host {host_name} unreachable: {hr.unreachable}")
        for f in hr.failures:
            say(out, f"FAIL {host_name} {f['test']}: {f['message']}")
        if show_skips:
            for s in hr.simulations:
                say(out, f"SIMULATED {host_name} {s['test']}: {s['message']}")
            for s in hr.skips:
                say(out, f"skip {host_name} {s['test']}: {s['message']}")
    for what, hosts in result.simulated_parts.items():
        count = sum(1 for h in hosts for s in result.per_host[h].simulations if s["simulated"] == what)
        say(out, f"SIMULATED {count} check(s) on {len(hosts)} host(s) ({', '.join(hosts)}): {what}")
    if result.skipped and not show_skips:
        say(out, f"{result.skipped} check(s) skipped with a reason (--show-skips lists them)")
    for problem in result.errors:
        say(err, f"error: {problem}")
    if json_path:
        say(err, f"report: {json_path}")
    for name, layer in layers.items():
        if layer is not None:
            print_layer(name, layer)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
