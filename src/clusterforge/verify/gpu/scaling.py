"""Scaling efficiency of a small real DDP training step from 1 to N GPUs (via torchrun).

Weak scaling (fixed per-GPU batch) is the headline figure:
``efficiency = throughput_N / (N x throughput_1)``. Strong scaling (fixed global batch,
the source documents' ``T1 / (N x TN)``) is measured in the same launches and reported too.
"""

from __future__ import annotations

from collections.abc import Sequence

from clusterforge.verify.gpu import launch, metrics

WORKER = "clusterforge.verify.gpu.scaling_worker"


def gpu_counts(n: int) -> list[int]:
    """1, 2, 4, ... up to n, and n itself."""
    counts = []
    k = 1
    while k < n:
        counts.append(k)
        k *= 2
    counts.append(n)
    return counts


def efficiencies(runs: Sequence[dict]) -> dict:
    """From worker results (one per GPU count): weak and strong efficiency per count. Pure."""
    by_n = {int(r["world_size"]): r for r in runs}
    if 1 not in by_n:
        return {"weak": {}, "strong": {}, "note": "no single-GPU run to compare with"}
    base = by_n[1]["phases"]
    out: dict = {"weak": {}, "strong": {}}
    for n, r in sorted(by_n.items()):
        ph = r["phases"]
        if "weak" in ph and "weak" in base:
            out["weak"][str(n)] = round(
                metrics.weak_scaling_efficiency(base["weak"]["tokens_per_s"], ph["weak"]["tokens_per_s"], n),
                4,
            )
        if "strong" in ph and "strong" in base:
            out["strong"][str(n)] = round(
                metrics.strong_scaling_efficiency(base["strong"]["step_s"], ph["strong"]["step_s"], n), 4
            )
    return out


def run(
    ngpus: int,
    tokens_per_gpu: int = 8192,
    d_model: int = 2048,
    layers: int = 8,
    steps: int = 20,
    warmup: int = 5,
    hosts: Sequence[str] | None = None,
    log_dir: str | None = None,
    timeout_s: float = 900,
) -> dict:
    """Launch the worker on 1, 2, 4, ... ngpus local GPUs (then all hosts, if given)."""
    nodes = len(hosts) if hosts and len(hosts) > 1 else 1
    max_world = ngpus * nodes
    plan: list[tuple[int, Sequence[str] | None]] = [(k, None) for k in gpu_counts(ngpus)]
    if nodes > 1:
        plan.append((ngpus, hosts))
    common = [
        "--tokens-per-gpu",
        str(tokens_per_gpu),
        "--max-world",
        str(max_world),
        "--d-model",
        str(d_model),
    ]
    common += ["--layers", str(layers), "--steps", str(steps), "--warmup", str(warmup)]
    runs = []
    for k, h in plan:
        runs.append(launch.run_torchrun(WORKER, common, k, hosts=h, timeout_s=timeout_s, log_dir=log_dir))
    return {
        "headline": "weak",
        "weak": "fixed per-GPU batch; efficiency = throughput_N / (N x throughput_1)",
        "strong": "fixed global batch; efficiency = T1 / (N x TN)",
        "tokens_per_gpu": tokens_per_gpu,
        "runs": runs,
        "efficiency": efficiencies(runs),
    }
