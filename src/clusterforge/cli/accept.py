"""`clusterforge accept`: the GPU acceptance benchmarks on this machine against a server's catalog figures.

Exit codes: the acceptance suite's own: 0 passed, 1 a check failed, 2 no GPU or bad spec; 3 this machine cannot
run it (torch missing).
"""

from __future__ import annotations

import datetime as _dt
import importlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import typer

from clusterforge.cli._common import Format, emit_json, err, format_option, load, say, usage_error

__all__ = ["register"]


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
    from clusterforge.plan.acceptance import gpu_spec_for

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
    app.command("accept")(accept)
