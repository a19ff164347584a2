"""`clusterforge verify` (testinfra host checks) and `clusterforge accept` (GPU acceptance benchmarks).

Exit codes as in clusterforge.cli._common: 0 ok, 1 the cluster (or declaration) is wrong, 2 usage error,
3 environment problem (checks cannot run, torch missing). `accept` passes the acceptance
suite's own code through: 0 passed, 1 a check failed, 2 no GPU or bad spec.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import importlib.util
import json
import tempfile
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from clusterforge.cli._args import check_stack
from clusterforge.cli._common import (
    Format,
    emit_json,
    err,
    format_option,
    load,
    out,
    print_layer_checks,
    say,
    usage_error,
)
from clusterforge.targets import reach
from clusterforge.vocab import DeviceKind

if TYPE_CHECKING:
    from rich.table import Table

    from clusterforge.schedulers import LayerChecks

__all__ = ["gpu_spec_for", "register"]



class VerifyTarget(str, Enum):
    lab = "lab"
    ssh = "ssh"
    local = "local"


def results_table(result, kinds: dict[str, str] | None = None) -> Table:
    """One row per host (GPU servers and storage servers, with their kind), then the totals."""
    from rich.table import Table

    kinds = kinds or {}
    table = Table(title=f"host checks ({result.target})", title_justify="left")
    table.add_column("host")
    table.add_column("kind")
    table.add_column("passed", justify="right", style="green")
    table.add_column("failed", justify="right", style="red")
    table.add_column("skipped", justify="right", style="yellow")
    for host, hr in result.per_host.items():
        table.add_row(host, kinds.get(host, ""), str(hr.passed), str(hr.failed), str(hr.skipped))
    table.add_row("total", "", str(result.passed), str(result.failed), str(result.skipped), style="bold")
    return table


def throughput_table(result) -> Table | None:
    """The tiers' fio smoke figures (records with a throughput_mbps figure) against the declared ones."""
    rows = [r for r in result.records if "throughput_mbps" in (r.get("figures") or {})]
    if not rows:
        return None
    from rich.table import Table

    table = Table(title="tier throughput (fio sequential write)", title_justify="left")
    for column, justify in (("host", "left"), ("tier", "left"), ("MB/s", "right"), ("declared", "right"),
                            ("outcome", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        fig = r["figures"]
        declared = fig.get("expected_mbps")
        table.add_row(str(r.get("host")), str(fig.get("tier", "")), f"{fig['throughput_mbps']:.0f}",
                      "-" if declared is None else f">= {float(declared):.0f}", r["outcome"])
    return table


def check_names(incomplete: str = "") -> list[str]:
    """The host check modules (verify/hosts/test_<name>.py) starting with ``incomplete``: --check's completion."""
    from clusterforge.verify import hosts

    names = sorted(p.stem.removeprefix("test_") for p in Path(hosts.__file__).parent.glob("test_*.py"))
    return [n for n in names if n.startswith(incomplete)]


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
        None, "--workers", "-n", help="parallel pytest workers (default: one per 8 hosts, at most one per CPU, 8)"),
    show_skips: bool = typer.Option(False, "--show-skips", help="also list every skipped check with its reason"),
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
    counts, RuntimeClass, device-plugin DaemonSet, team quotas, a live quota probe); exit 1 on any failure."""
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
    out.print(results_table(result, {d.name: d.kind for d in plan.devices}))
    figures = throughput_table(result)
    if figures is not None:
        out.print(figures)
    for host_name, hr in result.per_host.items():
        if hr.unreachable is not None:
            say(out, f"host {host_name} unreachable: {hr.unreachable}")
        for f in hr.failures:
            say(out, f"FAIL {host_name} {f['test']}: {f['message']}")
        if show_skips:
            for s in hr.skips:
                say(out, f"skip {host_name} {s['test']}: {s['message']}")
    for problem in result.errors:
        say(err, f"error: {problem}")
    if json_path:
        say(err, f"report: {json_path}")
    for name, layer in layers.items():
        if layer is not None:
            print_layer(name, layer)
    if not result.ok or not layers_ok:
        raise typer.Exit(1)


def print_layer(name: str, layer: LayerChecks) -> None:
    """A scheduler's checks as a table, or the line saying why none ran."""
    print_layer_checks(name, layer.title, None if layer.checks is None else list(layer.checks), layer.why)


def gpu_spec_for(spec, plan, *, host: str | None = None, model: str | None = None) -> tuple[str, dict[str, Any]]:
    """(catalog model name, acceptance spec dict) for a planned server or a catalog server model.

    The dict is the catalog's ``gpu`` mapping (model, count, tflops_dense) as
    ``clusterforge.verify.gpu`` takes it. Raises LookupError naming what is missing.
    """
    if (host is None) == (model is None):
        raise ValueError("pass exactly one of host or model")
    if host is not None:
        device = next((d for d in plan.devices if d.name == host), None)
        if device is None or device.kind != DeviceKind.SERVER:
            raise LookupError(f"no GPU server {host!r} in the plan")
        model = device.model
    server = spec.catalog.servers.get(model)
    if server is None:
        raise LookupError(f"no server model {model!r} in the catalog ({', '.join(sorted(spec.catalog.servers))})")
    gpu = server.gpu
    if gpu is None or gpu.count == 0:
        raise LookupError(f"server model {model!r} has no GPUs")
    acceptance = gpu.acceptance.model_dump(mode="json") if gpu.acceptance else None
    return model, {"gpu": {"model": gpu.model, "count": gpu.count,
                           "tflops_dense": gpu.tflops_dense.model_dump(mode="json"), "acceptance": acceptance}}


def _accept_main():
    """The acceptance entry point, or None with the reason when this machine cannot run it."""
    if importlib.util.find_spec("torch") is None:
        return None, "torch is not installed here: pip install 'clusterforge[gpu]' (torch, nvidia-ml-py)"
    try:
        module = importlib.import_module("clusterforge.verify.gpu.runner")
    except ImportError as exc:
        return None, f"the GPU acceptance suite cannot be imported: {exc}"
    return module.accept_main, ""


def accept(
    inventory: Path = typer.Argument(..., help="inventory YAML (the cluster declaration)"),
    host: str | None = typer.Option(None, "--host", "-H", help="accept this planned server (its catalog model)"),
    model: str | None = typer.Option(None, "--model", "-m", help="accept against this catalog server model"),
    out_dir: Path | None = typer.Option(
        None, "--out", "-o", help="report directory (default acceptance/<name>-<time>)"),
    sustained_seconds: float = typer.Option(30.0, "--sustained-seconds", help="sustained matmul per precision"),
    window_seconds: float = typer.Option(5.0, "--window-seconds", help="CUDA-event window in the sustained run"),
    precisions: str | None = typer.Option(
        None, "--precisions",
        help="burst precisions, comma list (fp16,bf16,fp32,tf32,fp8; fp8 only where the model declares an fp8 peak)"),
    sizes: str = typer.Option("128M:4G", "--sizes", help="all-reduce sizes: BEGIN:END (factor 2) or a comma list"),
    nodes: str | None = typer.Option(
        None, "--nodes", help="comma list of nodes for multi-node runs (first = rendezvous)"),
    no_nccl_tests: bool = typer.Option(False, "--no-nccl-tests", help="do not run all_reduce_perf even if present"),
    no_scaling: bool = typer.Option(False, "--no-scaling", help="skip the DDP scaling measurement"),
    thresholds: str | None = typer.Option(None, "--thresholds", help="JSON object overriding acceptance thresholds"),
    format: Format = format_option(),
) -> None:
    """GPU acceptance on this machine against the catalog figures of a server (matmul, bandwidth, all-reduce)."""

    if (host is None) == (model is None):
        usage_error("pass exactly one of --host NAME or --model MODEL")
    try:
        threshold_overrides = json.loads(thresholds) if thresholds else None
    except json.JSONDecodeError as exc:
        usage_error(f"--thresholds is not JSON: {exc}")
    spec, plan, _ = load(inventory)
    try:
        model_name, spec_dict = gpu_spec_for(spec, plan, host=host, model=model)
    except LookupError as exc:
        usage_error(str(exc))
    main, why = _accept_main()
    if main is None:
        say(err, f"accept: {why}")
        raise typer.Exit(3)
    from clusterforge.verify.gpu.__main__ import parse_sizes

    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    target_dir = out_dir or Path("acceptance") / f"{host or model_name}-{stamp}"
    opts: dict[str, Any] = {
        "thresholds": threshold_overrides,
        "sustained_s": sustained_seconds,
        "window_s": window_seconds,
        "sizes": parse_sizes(sizes),
        "hosts": [n.strip() for n in nodes.split(",") if n.strip()] if nodes else None,
        "nccl_tests": not no_nccl_tests,
        "scaling_enabled": not no_scaling,
    }
    if precisions:
        opts["precisions"] = [p.strip() for p in precisions.split(",") if p.strip()]
    gpu = spec_dict["gpu"]
    say(err, f"accept: {host or model_name} ({gpu['count']}x {gpu['model']}) -> {target_dir}")
    code = main(spec_dict, target_dir, **opts)
    if format is Format.json:  # the run logs to stderr; stdout carries only the report
        report_file = Path(target_dir) / "report.json"
        emit_json({"exit_code": code, "out_dir": str(target_dir),
                   "report": json.loads(report_file.read_text()) if report_file.is_file() else None})
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
    app.command("accept")(accept)
