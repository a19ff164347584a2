"""Run the whole GPU acceptance on this node and write the report.

Order: probe (or NoGpuError) -> nvidia-smi records -> burst matmul per GPU and precision
(cool cards, the documents' method) -> copy bandwidth per GPU -> sustained matmul per
precision (all GPUs at once, NVML sampled) -> all-reduce smoke + busbw sweep (torchrun) and
its nccl-tests baseline -> scaling (torchrun, 1..N GPUs) -> evaluation -> report.

A step that raises is recorded under ``measurements.errors`` (a failed check), and the run
goes on; the report is rewritten after every step, so a run cut short keeps what it measured.
With ``hosts`` (several nodes), matmul and copy bandwidth cover this node's GPUs; the
all-reduce and the last scaling point span all hosts through torchrun's rendezvous.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from clusterforge.verify.gpu import allreduce, matmul, membw, metrics, probe, report, scaling
from clusterforge.verify.gpu.evaluate import evaluate
from clusterforge.verify.gpu.probe import NoGpuError
from clusterforge.verify.gpu.spec import PRECISIONS, AcceptanceSpec

SCHEMA = "clusterforge.gpu-acceptance/1"


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _stderr_log(msg: str) -> None:
    print(f"[accept {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class _Run:
    """One acceptance run's report, rewritten after every step; a step that raises is recorded, the run goes on."""

    def __init__(self, spec: AcceptanceSpec, out: Path, options: dict[str, Any], log: Callable[[str], None]):
        self.spec, self.out, self.log = spec, out, log
        self.m: dict[str, Any] = {"errors": {}}
        self.rep: dict[str, Any] = {
            "schema": SCHEMA,
            "started": _now(),
            "finished": None,
            "options": options,
            "spec": spec.model_dump(mode="json"),
            "measurements": self.m,
        }

    def save(self) -> None:
        self.rep["evaluation"] = evaluate(self.m, self.spec)
        report.write_report(self.rep, self.out)

    def step(self, name: str, fn: Callable[[], Any]) -> Any:
        self.log(f"{name} ...")
        t0 = time.monotonic()
        try:
            value = fn()
        except Exception as exc:  # noqa: BLE001 - recorded as a failed check, the run goes on
            self.m["errors"][name] = f"{type(exc).__name__}: {exc}"
            self.log(f"{name} FAILED: {exc}\n{traceback.format_exc()}")
            value = None
        self.log(f"{name} done in {time.monotonic() - t0:.1f} s")
        self.save()
        return value


def _measured_precisions(spec: AcceptanceSpec, precisions: Sequence[str], sustained_precisions: Sequence[str] | None,
                         log: Callable[[str], None]) -> tuple[list[str], list[str]]:
    """The burst and sustained precisions to measure: known ones, those the spec declares a peak for."""
    burst = list(precisions)
    sustained = list(precisions if sustained_precisions is None else sustained_precisions)
    for p in [*burst, *sustained]:
        if p not in PRECISIONS:
            raise ValueError(f"unknown precision {p!r}; expected one of {PRECISIONS}")
    undeclared = sorted({p for p in [*burst, *sustained] if not spec.tflops_dense.declares(p)})
    if undeclared:
        log(f"not measured: {', '.join(undeclared)} (the spec declares no peak for it)")
        burst = [p for p in burst if p not in undeclared]
        sustained = [p for p in sustained if p not in undeclared]
    return burst, sustained


def _host(run: _Run, torch: Any) -> tuple[list[int], list[str]]:
    """This node's GPUs and nvidia-smi's records of them; returns (device indexes, GPU names)."""
    m, out = run.m, run.out
    m["host"] = probe.host_info(torch)
    devices = list(range(m["host"]["gpu_count"]))
    names = [g["name"] for g in m["host"]["gpus"]]
    run.log(f"{len(devices)} GPU(s): {sorted(set(names))}")
    texts = probe.nvidia_smi_texts()
    for key, fname in (
        ("topo", "nvidia-smi-topo.txt"),
        ("query", "nvidia-smi-q.txt"),
        ("nvlink", "nvidia-smi-nvlink.txt"),
    ):
        report.atomic_write_text(out / fname, texts[key])
    m["host"]["topology"] = texts["topo"]
    run.rep["files"] = [
        "report.json",
        "report.md",
        "nvidia-smi-topo.txt",
        "nvidia-smi-q.txt",
        "nvidia-smi-nvlink.txt",
    ]
    return devices, names


def _gpu_steps(run: _Run, devices: list[int], precisions: list[str], sustained_precisions: list[str], *,
               n: int, membw_bytes: int, sustained_s: float, window_s: float) -> None:
    """Burst matmul per GPU and precision, copy bandwidth per GPU, sustained matmul per precision."""
    m, log = run.m, run.log
    mm: dict[str, Any] = {"burst": {}, "sustained": {}}
    m["matmul"] = mm

    def _burst():
        for d in devices:
            mm["burst"][str(d)] = {}
            for p in precisions:
                mm["burst"][str(d)][p] = matmul.burst(d, p, n=n)
                log(f"  burst gpu{d} {p}: {mm['burst'][str(d)][p]['tflops']} TFLOPS")

    run.step("matmul_burst", _burst)

    def _membw():
        m["membw"] = {}
        for d in devices:
            m["membw"][str(d)] = membw.copy_bandwidth(d, membw_bytes)
            log(f"  membw gpu{d}: {m['membw'][str(d)]['tbps']} TB/s")

    run.step("membw", _membw)

    for p in sustained_precisions:

        def _sus(p=p):
            mm["sustained"][p] = matmul.sustained(devices, p, duration_s=sustained_s, window_s=window_s, n=n)
            for d, r in mm["sustained"][p]["per_gpu"].items():
                log(f"  sustained gpu{d} {p}: best {r.get('best_tflops')} mean {r.get('mean_tflops')}")

        run.step(f"matmul_sustained_{p}", _sus)


def _fabric_steps(run: _Run, devices: list[int], names: list[str], options: Mapping[str, Any], *,
                  allreduce_warmup: int, nccl_tests: bool) -> None:
    """The all-reduce smoke and busbw sweep with its nccl-tests baseline, then the scaling run (torchrun)."""
    m, log, logs = run.m, run.log, run.out / "logs"
    sizes, dtype, iters, hosts = options["sizes"], options["allreduce_dtype"], options["allreduce_iters"], \
        options["hosts"]

    def _allreduce():
        r = allreduce.run(
            len(devices),
            sizes=sizes,
            dtype=dtype,
            iters=iters,
            warmup=allreduce_warmup,
            hosts=hosts,
            log_dir=str(logs),
        )
        m["allreduce"] = r
        if r["world_size"] > 1:
            r["baseline"] = allreduce.baseline(r["world_size"], names, sizes, dtype, iters, allreduce_warmup, hosts,
                                               nccl_tests)
        for row in r.get("sweep", []):
            log(f"  allreduce {metrics.human_size(row['bytes'])}: busbw {row['busbw_gbps']} GB/s")

    run.step("allreduce", _allreduce)

    if options["scaling"]:

        def _scaling():
            m["scaling"] = scaling.run(
                len(devices),
                tokens_per_gpu=options["tokens_per_gpu"],
                steps=options["scaling_steps"],
                hosts=hosts,
                log_dir=str(logs),
            )
            log(f"  scaling efficiency: {m['scaling']['efficiency']}")

        run.step("scaling", _scaling)


def run_acceptance(
    spec: AcceptanceSpec,
    out_dir: str | os.PathLike,
    sustained_s: float = 30.0,
    sizes: Sequence[int] | None = None,
    hosts: Sequence[str] | None = None,
    *,
    precisions: Sequence[str] = PRECISIONS,
    sustained_precisions: Sequence[str] | None = None,
    window_s: float = 5.0,
    n: int = 8192,
    membw_bytes: int = 4 * metrics.GIB,
    allreduce_dtype: str = "bf16",
    allreduce_iters: int = 20,
    allreduce_warmup: int = 5,
    nccl_tests: bool = True,
    scaling_enabled: bool = True,
    scaling_steps: int = 20,
    tokens_per_gpu: int = 8192,
    log: Callable[[str], None] = _stderr_log,
) -> dict:
    """Measure, evaluate against ``spec``, write report.json and report.md in ``out_dir``; return it."""
    torch = probe.require_gpu()  # raises NoGpuError
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    burst, sustained = _measured_precisions(spec, precisions, sustained_precisions, log)
    options = {
        "sustained_s": sustained_s,
        "window_s": window_s,
        "n": n,
        "precisions": burst,
        "sustained_precisions": sustained,
        "sizes": list(sizes or allreduce.DEFAULT_SIZES),
        "hosts": list(hosts) if hosts else None,
        "membw_bytes": membw_bytes,
        "allreduce_dtype": allreduce_dtype,
        "allreduce_iters": allreduce_iters,
        "scaling": scaling_enabled,
        "scaling_steps": scaling_steps,
        "tokens_per_gpu": tokens_per_gpu,
    }
    run = _Run(spec, out, options, log)
    devices, names = _host(run, torch)
    _gpu_steps(run, devices, burst, sustained, n=n, membw_bytes=membw_bytes, sustained_s=sustained_s,
               window_s=window_s)
    torch.cuda.empty_cache()
    _fabric_steps(run, devices, names, {**options, "hosts": hosts}, allreduce_warmup=allreduce_warmup,
                  nccl_tests=nccl_tests)
    run.rep["finished"] = _now()
    run.save()
    ev = run.rep["evaluation"]
    log(f"{'PASSED' if ev['passed'] else 'FAILED'}: {len(ev['checks'])} checks, failed: {ev['failed']}")
    return run.rep


def reevaluate(report_path: str | os.PathLike, spec: AcceptanceSpec, out_dir: str | os.PathLike) -> dict:
    """Evaluate the measurements of an earlier report against ``spec`` again (no GPU needed)."""
    import json

    with open(report_path) as f:
        old = json.load(f)
    rep = dict(old)
    rep["spec"] = spec.model_dump(mode="json")
    rep["evaluation"] = evaluate(old["measurements"], spec)
    rep["reevaluated"] = {
        "at": _now(),
        "from": str(report_path),
        "previous_failed": old.get("evaluation", {}).get("failed"),
    }
    report.write_report(rep, out_dir)
    return rep


def accept_main(spec_dict: Mapping[str, Any], out_dir: str | os.PathLike, **opts: Any) -> int:
    """Entry point for the CLI: 0 = all checks passed, 1 = a check failed, 2 = no GPU / bad spec."""
    thresholds = opts.pop("thresholds", None)
    reevaluate_from = opts.pop("reevaluate_from", None)
    try:
        spec = AcceptanceSpec.from_dict(spec_dict, thresholds=thresholds)
    except ValueError as exc:
        print(f"accept: invalid spec: {exc}", file=sys.stderr)
        return 2
    try:
        rep = reevaluate(reevaluate_from, spec, out_dir) if reevaluate_from else run_acceptance(spec, out_dir, **opts)
    except NoGpuError as exc:
        print(f"accept: {exc}", file=sys.stderr)
        return 2
    print(f"accept: report in {Path(out_dir) / 'report.md'}", file=sys.stderr)
    return 0 if rep["evaluation"]["passed"] else 1
