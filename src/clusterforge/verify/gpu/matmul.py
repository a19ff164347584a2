"""Per-GPU matmul throughput: the documents' burst check and a sustained run with telemetry.

Precisions: ``fp16`` and ``bf16`` (tensor cores), ``fp32`` (TF32 off: plain FP32),
``tf32`` (FP32 tensors, TF32 tensor-core math) and ``fp8`` (E4M3 operands through
``torch._scaled_mm`` with unit scales and a bf16 result, on GPUs of compute capability 8.9 and
later; FP32 accumulation without the fast-accumulation shortcut, see ``FP8_FAST_ACCUM``).
Inputs are random (never zeros: zeros run faster than real data), each product's output is
poisoned first and checked against a
float64 reference on a slice, so a fast wrong answer does not pass.

- burst: the source documents' method: n = 8192, 5 warm-ups, 10 timed products, host
  timer after ``torch.cuda.synchronize``; TFLOPS = 2 n^3 iters / seconds.
- sustained: every listed GPU loaded at once for ``duration_s``; each window is timed with
  CUDA events; NVML is sampled in a background thread throughout.
"""

from __future__ import annotations

import contextlib
import statistics
import threading
import time
from typing import Any

from clusterforge.verify.gpu import metrics, probe

# Largest acceptable ||C - C_ref|| / ||C_ref|| on a slice, against float64 on the same (rounded) inputs.
REL_ERR_LIMIT = {"fp16": 1e-2, "bf16": 2e-2, "tf32": 1e-2, "fp32": 1e-4, "fp8": 2e-2}
# Hopper's fp8 tensor cores can skip the periodic promotion of partial sums to FP32 ("fast
# accumulation"); libraries use it for forward passes only. Off: the gate is measured on the mode
# that keeps full accuracy.
FP8_FAST_ACCUM = False
FP8_MIN_CAPABILITY = (8, 9)


def _torch():
    import torch

    return torch


def dtype_of(torch: Any, precision: str):
    return {
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
        "fp32": torch.float32,
        "tf32": torch.float32,
        "fp8": torch.float8_e4m3fn,
    }[precision]


@contextlib.contextmanager
def tf32_mode(torch: Any, precision: str):
    """TF32 math on for 'tf32', off for everything else; restores the previous setting."""
    prev_mm = torch.backends.cuda.matmul.allow_tf32
    prev_cudnn = torch.backends.cudnn.allow_tf32
    on = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev_mm
        torch.backends.cudnn.allow_tf32 = prev_cudnn


def _operands(torch: Any, device: int, precision: str, n: int, seed: int):
    g = torch.Generator(device=f"cuda:{device}")
    g.manual_seed(seed)
    if precision == "fp8":
        return _fp8_operands(torch, device, n, g)
    dt = dtype_of(torch, precision)
    a = torch.randn(n, n, device=f"cuda:{device}", dtype=dt, generator=g)
    b = torch.randn(n, n, device=f"cuda:{device}", dtype=dt, generator=g)
    c = torch.empty(n, n, device=f"cuda:{device}", dtype=dt)
    return a, b, c


def _fp8_operands(torch: Any, device: int, n: int, g: Any):
    """E4M3 A (row-major) and B (column-major, as cuBLASLt's fp8 kernels need), bf16 C."""
    cap = torch.cuda.get_device_capability(device)
    if tuple(cap) < FP8_MIN_CAPABILITY:
        raise RuntimeError(f"fp8 matmul needs compute capability >= 8.9; this GPU is {cap[0]}.{cap[1]}")
    dev = f"cuda:{device}"
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16, generator=g).to(torch.float8_e4m3fn)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16, generator=g).to(torch.float8_e4m3fn)
    b = b.t().contiguous().t()
    c = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
    return a, b, c


def product(torch: Any, precision: str, a, b, c) -> None:
    """C = A B in ``precision``, written into ``c``."""
    if precision != "fp8":
        torch.matmul(a, b, out=c)
        return
    one = _unit_scale(torch, a.device)
    torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                     use_fast_accum=FP8_FAST_ACCUM, out=c)


_SCALES: dict[Any, Any] = {}


def _unit_scale(torch: Any, device: Any):
    if device not in _SCALES:
        _SCALES[device] = torch.ones((), device=device, dtype=torch.float32)
    return _SCALES[device]


def relative_error(torch: Any, a, b, c, rows: int = 128, cols: int = 128) -> float:
    """||C - A B|| / ||A B|| on the top-left rows x cols block, reference in float64."""
    ref = a[:rows, :].float().double() @ b[:, :cols].float().double()
    got = c[:rows, :cols].double()
    err = float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))
    return err


def burst(device: int, precision: str, n: int = 8192, warmup: int = 5, iters: int = 10, seed: int = 0) -> dict:
    """The documents' check on one GPU: 5 warm-ups, 10 timed products, synchronised host timer."""
    torch = _torch()
    with torch.cuda.device(device), tf32_mode(torch, precision):
        a, b, c = _operands(torch, device, precision, n, seed)
        c.fill_(float("nan"))
        for _ in range(warmup):
            product(torch, precision, a, b, c)
        torch.cuda.synchronize(device)
        c.fill_(float("nan"))
        torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        for _ in range(iters):
            product(torch, precision, a, b, c)
        torch.cuda.synchronize(device)
        seconds = time.perf_counter() - t0
        err = relative_error(torch, a, b, c)
        del a, b, c
        torch.cuda.empty_cache()
    ok = err == err and err <= REL_ERR_LIMIT[precision]  # err == err is False for NaN
    return {
        "method": "documents: n^3 matmul, host timer after synchronize",
        "n": n,
        "warmup": warmup,
        "iters": iters,
        "seconds": seconds,
        "tflops": round(metrics.tflops(n, iters, seconds), 2),
        "rel_err": err,
        "rel_err_limit": REL_ERR_LIMIT[precision],
        "numerics_ok": bool(ok),
        **({"fp8_fast_accum": FP8_FAST_ACCUM} if precision == "fp8" else {}),
    }


def _sustained_one(
    torch: Any,
    device: int,
    precision: str,
    n: int,
    windows: int,
    window_s: float,
    start: threading.Barrier,
    out: dict,
    chunk: int = 32,
) -> None:
    try:
        with torch.cuda.device(device):
            a, b, c = _operands(torch, device, precision, n, seed=1000 + device)
            # calibrate: time of one product, after warm-up
            for _ in range(3):
                product(torch, precision, a, b, c)
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(10):
                product(torch, precision, a, b, c)
            e1.record()
            e1.synchronize()
            per_iter = e0.elapsed_time(e1) / 1e3 / 10
            iters = max(chunk, int(window_s / per_iter) // chunk * chunk)
            start.wait()
            results = []
            c.fill_(float("nan"))
            for _ in range(windows):
                w0, w1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                w0.record()
                pending = None
                # keep at most two chunks in flight so a full launch queue never blocks a
                # thread while it holds the GIL (the other GPUs' threads must keep launching)
                for _ in range(iters // chunk):
                    for _ in range(chunk):
                        product(torch, precision, a, b, c)
                    ev = torch.cuda.Event()
                    ev.record()
                    if pending is not None:
                        pending.synchronize()
                    pending = ev
                w1.record()
                w1.synchronize()
                sec = w0.elapsed_time(w1) / 1e3
                results.append(
                    {
                        "iters": iters,
                        "seconds": round(sec, 4),
                        "tflops": round(metrics.tflops(n, iters, sec), 2),
                    }
                )
            err = relative_error(torch, a, b, c)
            del a, b, c
        out[device] = {"windows": results, "rel_err": err, "per_iter_s": per_iter}
    except BaseException as exc:  # noqa: BLE001 - reported per GPU
        out[device] = {"error": f"{type(exc).__name__}: {exc}"}
        with contextlib.suppress(threading.BrokenBarrierError):
            start.abort()


def _nvml_sampler(torch: Any, devices: list[int], interval_s: float) -> tuple[Any, dict[int, int], str | None]:
    """(an NVML sampler over ``devices``, CUDA index -> NVML index, None) or, where NVML cannot be used,
    (None, {}, why): telemetry is optional and its absence is recorded."""
    try:
        import pynvml

        from clusterforge.verify.gpu.sampler import NvmlSampler, nvml_index_for_cuda

        pynvml.nvmlInit()
        try:
            nvml_idx = {d: nvml_index_for_cuda(pynvml, torch.cuda.get_device_properties(d), d) for d in devices}
        finally:
            pynvml.nvmlShutdown()
        return NvmlSampler(sorted(set(nvml_idx.values())), interval_s=interval_s), nvml_idx, None
    except Exception as exc:  # noqa: BLE001 - telemetry is optional; its absence is recorded
        return None, {}, f"{type(exc).__name__}: {exc}"


def _gpu_result(r: dict, precision: str, tele: dict[str, Any] | None, tele_error: str | None,
                counters: dict[str, Any]) -> dict:
    """One GPU's sustained result: its windows summed up, its numerics judged, its telemetry attached."""
    if "windows" in r:
        tf = [w["tflops"] for w in r["windows"]]
        r.update(
            best_tflops=max(tf),
            mean_tflops=round(statistics.fmean(tf), 2),
            min_tflops=min(tf),
            numerics_ok=bool(r["rel_err"] == r["rel_err"] and r["rel_err"] <= REL_ERR_LIMIT[precision]),
        )
    if tele is not None:
        r["telemetry"] = tele
        bus = str(tele.get("static", {}).get("pci_bus_id") or "").upper()
        if bus in counters:
            r["telemetry"]["clock_event_counters_us"] = counters[bus]
    elif tele_error:
        r["telemetry"] = {"error": tele_error}
    return r


def sustained(
    devices: list[int],
    precision: str,
    duration_s: float = 30.0,
    window_s: float = 5.0,
    n: int = 8192,
    sample_interval_s: float = 0.2,
    telemetry: bool = True,
) -> dict:
    """Load every GPU in ``devices`` at once for ``duration_s``; per-window TFLOPS + NVML telemetry."""
    torch = _torch()
    windows = max(1, round(duration_s / window_s))
    window_s = duration_s / windows
    start = threading.Barrier(len(devices) + 1)  # the GPUs' threads and this one
    out: dict[int, dict] = {}
    threads = [
        threading.Thread(
            target=_sustained_one,
            args=(torch, d, precision, n, windows, window_s, start, out),
            name=f"matmul-{precision}-gpu{d}",
        )
        for d in devices
    ]
    tele: dict[int, Any] = {}
    sampler, nvml_idx, tele_error = _nvml_sampler(torch, devices, sample_interval_s) if telemetry else (None, {}, None)
    with tf32_mode(torch, precision):
        for t in threads:
            t.start()
        try:
            start.wait()  # operands made and calibrated on every GPU: sample only the timed windows
        except threading.BrokenBarrierError:
            sampler = None  # a GPU's thread failed; its error is in out[]
        ctx = sampler if sampler is not None else contextlib.nullcontext()
        counters_before = probe.clock_event_counters() if telemetry else {}
        t0 = time.monotonic()
        with ctx:
            for t in threads:
                t.join()
        wall = time.monotonic() - t0
        counters = probe.counters_delta(counters_before, probe.clock_event_counters()) if telemetry else {}
    if sampler is not None:
        res = sampler.result()
        tele = {d: res[nvml_idx[d]] for d in devices}
    per_gpu = {str(d): _gpu_result(out.get(d, {"error": "thread produced no result"}), precision, tele.get(d),
                                   tele_error, counters) for d in devices}
    return {
        "method": "all listed GPUs at once; CUDA events per window",
        "n": n,
        "duration_s": duration_s,
        "window_s": round(window_s, 3),
        "windows": windows,
        "wall_s": round(wall, 2),
        "concurrent_gpus": len(devices),
        "per_gpu": per_gpu,
    }
