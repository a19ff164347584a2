"""``python -m clusterforge.verify.gpu --spec spec.json --out DIR [options]``

The spec file is JSON: an AcceptanceSpec, a catalog server model (``{"gpu": {...}}``) or a
catalog ``gpu`` mapping. Exit code: 0 passed, 1 a check failed, 2 no GPU or bad spec.
"""

from __future__ import annotations

import argparse
import json
import sys

from clusterforge.verify.gpu import metrics
from clusterforge.verify.gpu.runner import accept_main
from clusterforge.verify.gpu.spec import PRECISIONS


def _list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m clusterforge.verify.gpu",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--spec", required=True, help="JSON file: AcceptanceSpec or catalog server model / gpu mapping")
    p.add_argument("--out", required=True, help="directory for report.json, report.md and nvidia-smi records")
    p.add_argument("--thresholds", default=None, help="JSON object overriding spec thresholds")
    p.add_argument("--sustained-s", type=float, default=30.0, help="seconds of sustained matmul per precision")
    p.add_argument("--window-s", type=float, default=5.0, help="CUDA-event window in the sustained run")
    p.add_argument("--precisions", type=_list, default=list(PRECISIONS), help="burst precisions (comma list)")
    p.add_argument("--sustained-precisions", type=_list, default=None, help="default: same as --precisions")
    p.add_argument("--n", type=int, default=8192, help="matmul size n (n x n x n)")
    p.add_argument("--sizes", default="128M:4G", help="all-reduce sizes: BEGIN:END (factor 2) or a comma list")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"], help="all-reduce dtype")
    p.add_argument("--iters", type=int, default=20, help="timed all-reduces per size")
    p.add_argument("--hosts", type=_list, default=None, help="comma list of nodes (first = rendezvous)")
    p.add_argument("--no-nccl-tests", action="store_true", help="do not run all_reduce_perf even if present")
    p.add_argument("--no-scaling", action="store_true")
    p.add_argument("--scaling-steps", type=int, default=20)
    p.add_argument("--tokens-per-gpu", type=int, default=8192)
    p.add_argument(
        "--reevaluate", default=None, metavar="REPORT_JSON", help="no measuring: evaluate an earlier report.json again"
    )
    p.add_argument("--membw-gib", type=float, default=4.0, help="copy buffer size in GiB")
    return p


def parse_sizes(text: str) -> list[int]:
    if ":" in text:
        b, e = text.split(":", 1)
        return metrics.size_sweep(metrics.parse_size(b), metrics.parse_size(e), 2)
    return [metrics.parse_size(s) for s in _list(text)]


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    with open(a.spec) as f:
        spec_dict = json.load(f)
    return accept_main(
        spec_dict,
        a.out,
        thresholds=json.loads(a.thresholds) if a.thresholds else None,
        sustained_s=a.sustained_s,
        window_s=a.window_s,
        precisions=a.precisions,
        sustained_precisions=a.sustained_precisions,
        n=a.n,
        sizes=parse_sizes(a.sizes),
        hosts=a.hosts,
        allreduce_dtype=a.dtype,
        allreduce_iters=a.iters,
        nccl_tests=not a.no_nccl_tests,
        scaling_enabled=not a.no_scaling,
        scaling_steps=a.scaling_steps,
        tokens_per_gpu=a.tokens_per_gpu,
        membw_bytes=int(a.membw_gib * metrics.GIB),
        reevaluate_from=a.reevaluate,
    )


if __name__ == "__main__":
    sys.exit(main())
