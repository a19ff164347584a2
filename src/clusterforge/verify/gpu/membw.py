"""Device memory bandwidth: a large device-to-device copy, counting bytes read plus bytes written."""

from __future__ import annotations

import statistics

from clusterforge.verify.gpu import metrics


def copy_bandwidth(device: int, nbytes: int = 4 * metrics.GIB, warmup: int = 3, iters: int = 20) -> dict:
    """Time ``dst.copy_(src)`` of ``nbytes`` with CUDA events; TB/s = 2 x bytes x iters / s."""
    import torch

    n = nbytes // 4
    with torch.cuda.device(device):
        src = torch.rand(n, device=f"cuda:{device}", dtype=torch.float32)
        dst = torch.full((n,), float("nan"), device=f"cuda:{device}", dtype=torch.float32)
        for _ in range(warmup):
            dst.copy_(src)
        torch.cuda.synchronize(device)
        per_iter = []
        for _ in range(iters):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            dst.copy_(src)
            e1.record()
            e1.synchronize()
            per_iter.append(e0.elapsed_time(e1) / 1e3)
        ok = bool(torch.equal(dst, src))
        del src, dst
        torch.cuda.empty_cache()
    median = statistics.median(per_iter)
    return {
        "method": "device-to-device copy, read + write counted, CUDA events",
        "bytes": n * 4,
        "iters": iters,
        "median_s": median,
        "tbps": round(metrics.copy_bandwidth_tbps(n * 4, 1, median), 3),
        "best_tbps": round(metrics.copy_bandwidth_tbps(n * 4, 1, min(per_iter)), 3),
        "copy_ok": ok,
    }
