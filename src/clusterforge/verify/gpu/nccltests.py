"""nccl-tests ``all_reduce_perf``: command line, output parsing, reference figures, fidelity ratios.

Only ``run_all_reduce_perf`` starts a process; everything else is pure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from clusterforge.verify.gpu import metrics
from clusterforge.verify.gpu_names import gpu_model_matches

# nccl-tests 2.19.6, all_reduce_perf -b 128M -e 4G -f 2 -g 2, 2x NVIDIA H200 over NVLink (NV18),
# driver 580.159.04, CUDA 13.0 (shared/reference/gpu-acceptance.md). Used as the fidelity
# baseline when all_reduce_perf is not installed on the machine under test; recorded as such.
REFERENCE_2XH200: dict[str, Any] = {
    "source": "reference: nccl-tests 2.19.6 on 2x H200 NV18 (gpu-acceptance.md), not run here",
    "gpu_model": "H200",
    "world_size": 2,
    "busbw_gbps": {
        128 * metrics.MIB: 284.0,
        256 * metrics.MIB: 301.0,
        512 * metrics.MIB: 316.0,
        1 * metrics.GIB: 325.0,
        2 * metrics.GIB: 336.0,
        4 * metrics.GIB: 345.0,
    },
}

NCCL_TESTS_DTYPE = {"bf16": "bfloat16", "fp16": "half", "fp32": "float"}


def find_all_reduce_perf() -> str | None:
    """``all_reduce_perf`` from $NCCL_TESTS_DIR, else from PATH."""
    d = os.environ.get("NCCL_TESTS_DIR")
    if d:
        p = os.path.join(d, "all_reduce_perf")
        if os.access(p, os.X_OK):
            return p
    return shutil.which("all_reduce_perf")


def all_reduce_perf_argv(
    binary: str,
    begin: int,
    end: int,
    ngpus: int,
    dtype: str = "bf16",
    factor: int = 2,
    iters: int = 20,
    warmup: int = 5,
) -> list[str]:
    """Single process driving ``ngpus`` GPUs (-g N, no MPI needed)."""
    return [
        binary,
        "-b",
        str(begin),
        "-e",
        str(end),
        "-f",
        str(factor),
        "-g",
        str(ngpus),
        "-d",
        NCCL_TESTS_DTYPE[dtype],
        "-n",
        str(iters),
        "-w",
        str(warmup),
    ]


def _num(tok: str) -> float | None:
    try:
        return float(tok)
    except ValueError:
        return None


def parse_all_reduce_perf(text: str) -> dict:
    """Rows of an all_reduce_perf table: out-of-place and in-place time (us), algbw, busbw, #wrong.

    Data lines look like (columns after ``root``: time algbw busbw #wrong, twice)::

         134217728      67108864  bfloat16     sum      -1    470.5  285.27  285.27      0    468.1  286.7 ...
    """
    rows = []
    avg = None
    version = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("# Avg bus bandwidth"):
            avg = _num(s.split(":")[-1].strip())
            continue
        if s.startswith("# nccl-tests version") or s.startswith("# NCCL Tests"):
            version = s.lstrip("# ").strip()
            continue
        if not s or s.startswith("#"):
            continue
        tok = s.split()
        if len(tok) < 13 or not tok[0].isdigit():
            continue
        nums = [_num(t) for t in tok[5:13]]
        if any(v is None for v in (nums[0], nums[1], nums[2], nums[4], nums[5], nums[6])):
            continue
        rows.append(
            {
                "bytes": int(tok[0]),
                "count": int(tok[1]),
                "type": tok[2],
                "redop": tok[3],
                "out_of_place": {
                    "time_us": nums[0],
                    "algbw_gbps": nums[1],
                    "busbw_gbps": nums[2],
                    "wrong": tok[8],
                },
                "in_place": {
                    "time_us": nums[4],
                    "algbw_gbps": nums[5],
                    "busbw_gbps": nums[6],
                    "wrong": tok[12],
                },
            }
        )
    return {"rows": rows, "avg_busbw_gbps": avg, "version": version}


def baseline_from_nccl_tests(parsed: dict, binary: str) -> dict:
    """Fidelity baseline from a real run: in-place busbw (our all-reduce is in place)."""
    return {
        "source": f"nccl-tests all_reduce_perf run here ({binary})",
        "measured_here": True,
        "busbw_gbps": {r["bytes"]: r["in_place"]["busbw_gbps"] for r in parsed["rows"]},
        "busbw_out_of_place_gbps": {r["bytes"]: r["out_of_place"]["busbw_gbps"] for r in parsed["rows"]},
        "wrong": {r["bytes"]: [r["out_of_place"]["wrong"], r["in_place"]["wrong"]] for r in parsed["rows"]},
    }


def reference_baseline(gpu_names: Sequence[str], world_size: int) -> dict | None:
    """The recorded 2x H200 nccl-tests figures, if this is such a machine; otherwise None."""
    ref = REFERENCE_2XH200
    if world_size == ref["world_size"] and gpu_names and all(gpu_model_matches(ref["gpu_model"], n) for n in gpu_names):
        return {"source": ref["source"], "measured_here": False, "busbw_gbps": dict(ref["busbw_gbps"])}
    return None


def fidelity(
    ours: Sequence[Mapping], baseline_busbw: Mapping[int | str, float], min_bytes: int = metrics.GIB
) -> list[dict]:
    """Per message size present in both: ratio ours / baseline, and whether it counts (>= min_bytes)."""
    base = {int(k): float(v) for k, v in baseline_busbw.items()}
    out = []
    for row in ours:
        b = int(row["bytes"])
        if b in base and base[b] > 0:
            out.append(
                {
                    "bytes": b,
                    "ours_gbps": row["busbw_gbps"],
                    "baseline_gbps": base[b],
                    "ratio": round(row["busbw_gbps"] / base[b], 4),
                    "counted": b >= min_bytes,
                }
            )
    return out


def run_all_reduce_perf(argv: Sequence[str], timeout_s: float = 600) -> dict:
    p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s, env=dict(os.environ))
    parsed = parse_all_reduce_perf(p.stdout)
    parsed.update(argv=list(argv), returncode=p.returncode)
    if p.returncode != 0 or not parsed["rows"]:
        parsed["error"] = (p.stderr or p.stdout)[-2000:]
    return parsed
