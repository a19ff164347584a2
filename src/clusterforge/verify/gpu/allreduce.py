"""Launcher side of the all-reduce step: torchrun over all local GPUs (or all hosts), then
nccl-tests when ``all_reduce_perf`` is installed, else the recorded reference figures.
"""

from __future__ import annotations

from collections.abc import Sequence

from clusterforge.verify.gpu import launch, metrics, nccltests

DEFAULT_SIZES = metrics.size_sweep(128 * metrics.MIB, 4 * metrics.GIB, 2)
WORKER = "clusterforge.verify.gpu.allreduce_worker"


def run(
    nproc_per_node: int,
    sizes: Sequence[int] = DEFAULT_SIZES,
    dtype: str = "bf16",
    iters: int = 20,
    warmup: int = 5,
    hosts: Sequence[str] | None = None,
    log_dir: str | None = None,
    timeout_s: float = 900,
) -> dict:
    """Smoke test + busbw sweep through torch.distributed; rank 0's result."""
    args = ["--sizes", ",".join(str(s) for s in sizes), "--dtype", dtype, "--iters", str(iters)]
    args += ["--warmup", str(warmup)]
    result = launch.run_torchrun(WORKER, args, nproc_per_node, hosts=hosts, timeout_s=timeout_s, log_dir=log_dir)
    result["nodes"] = len(hosts) if hosts else 1
    return result


def baseline(
    ngpus: int,
    gpu_names: Sequence[str],
    sizes: Sequence[int] = DEFAULT_SIZES,
    dtype: str = "bf16",
    iters: int = 20,
    warmup: int = 5,
    hosts: Sequence[str] | None = None,
    use_nccl_tests: bool = True,
) -> dict | None:
    """nccl-tests run here when available (single node, -g N), else the reference figures, else None."""
    binary = nccltests.find_all_reduce_perf() if use_nccl_tests else None
    if binary and not (hosts and len(hosts) > 1) and ngpus > 1:
        argv = nccltests.all_reduce_perf_argv(binary, min(sizes), max(sizes), ngpus, dtype, 2, iters, warmup)
        parsed = nccltests.run_all_reduce_perf(argv)
        if "error" not in parsed:
            b = nccltests.baseline_from_nccl_tests(parsed, binary)
            b["raw"] = parsed
            return b
        ref = nccltests.reference_baseline(gpu_names, ngpus)
        if ref is not None:
            ref["nccl_tests_error"] = parsed["error"]
        return ref
    ref = nccltests.reference_baseline(gpu_names, ngpus)
    if ref is not None:
        ref["why"] = "all_reduce_perf (nccl-tests) not found on PATH or $NCCL_TESTS_DIR"
    return ref
