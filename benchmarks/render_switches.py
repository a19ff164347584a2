#!/usr/bin/env python3
"""Benchmark: render every switch config for generated RoCE clusters of 1, 8, 64 and 512 SUs.

The inventory is superpod-4su.yaml (32 x 8-GPU servers per SU) with its data plane turned into
RoCE on SONiC SN5400s (benchmarks/gen_inventory.py), the envelope at 512 SUs for every size, so
the spine and core tiers are the same at every size and only leaves are added: the data plane
is three tiers (per-SU spines, cores), the storage plane three tiers (pod spines, storage cores).
Each size runs in its own process so peak RSS is that size's own. CPU seconds are printed next to
wall seconds because the machine is shared; ms/switch is render wall time over switches. Large
renders fork workers (clusterforge/fanout.py): render CPU includes theirs; peak RSS is this
process's own.

    .venv/bin/python benchmarks/render_switches.py                 # 1 8 64 512
    .venv/bin/python benchmarks/render_switches.py --sizes 1 8     # some sizes
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_inventory import generate  # noqa: E402
from results import recording  # noqa: E402

SIZES = (1, 8, 64, 512)
ENVELOPE_MAX_SUS = 512


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def _workers_cpu() -> float:
    """CPU seconds of the render's forked workers (clusterforge/fanout.py), all reaped by now."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def run_one(sus: int, max_sus: int) -> dict:
    """Load, plan and render one size in this process; the result as a dict."""
    from clusterforge.model import load_cluster
    from clusterforge.plan import PlanError, plan_cluster
    from clusterforge.render.switches import render_switches

    with tempfile.TemporaryDirectory() as tmp:
        path = generate(sus, Path(tmp) / f"bench-{sus}su.yaml", "roce", max_sus)
        started = time.perf_counter()
        spec, _ = load_cluster(path)
        loaded = time.perf_counter()
        try:
            plan = plan_cluster(spec)
        except PlanError as exc:
            return {"sus": sus, "max_sus": max_sus, "error": "; ".join(m for _, m in exc.problems),
                    "load_s": loaded - started, "peak_rss_mib": peak_rss_mib()}
    planned = time.perf_counter()
    cpu = time.process_time()
    files = render_switches(plan)
    rendered = time.perf_counter()
    switches = len({path.split("/")[1] for path in files if "/_fabric/" not in path})
    return {
        "sus": sus, "max_sus": max_sus, "gpus": plan.summary.gpus, "switches": switches, "files": len(files),
        "bytes": sum(len(text) for text in files.values()), "load_s": loaded - started, "plan_s": planned - loaded,
        "render_s": rendered - planned, "render_cpu_s": time.process_time() - cpu + _workers_cpu(),
        "s_per_switch": (rendered - planned) / max(switches, 1), "tiers": plan.fabric["data"].tiers,
        "storage_tiers": plan.fabric["storage"].tiers, "peak_rss_mib": peak_rss_mib(),
    }


def child(sus: int, max_sus: int) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--one", str(sus), str(max_sus)], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        return {"sus": sus, "max_sus": max_sus, "error": f"exit {proc.returncode}: {proc.stderr.strip()[-800:]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(result: dict) -> None:
    head = f"{result['sus']:>4} SUs (envelope max_sus {result['max_sus']:>3})"
    if "error" in result:
        print(f"{head}: PlanError: {result['error']}", flush=True)
        return
    print(f"{head}: {result['gpus']:>7,} GPUs, {result['tiers']}/{result['storage_tiers']}-tier data/storage,"
          f" {result['switches']:>6,} switches, {result['files']:>6,} files ({result['bytes'] / 2**20:,.1f} MiB) |"
          f" plan {result['plan_s']:.2f} s, render {result['render_s']:.2f} s (cpu {result['render_cpu_s']:.2f} s)"
          f" = {result['s_per_switch'] * 1e3:.3f} ms/switch | peak RSS {result['peak_rss_mib']:,.0f} MiB", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--one", nargs=2, type=int, metavar=("SUS", "MAX_SUS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(*args.one)))
        return 0
    with recording("render_switches", sizes=args.sizes, envelope_max_sus=ENVELOPE_MAX_SUS) as rec:
        for sus in args.sizes:
            result = child(sus, ENVELOPE_MAX_SUS)
            report(result)
            rec.record("size", **result)
            if "error" in result and sus < ENVELOPE_MAX_SUS:
                own = child(sus, sus)
                report(own)
                rec.record("size", **own)
    return 0


if __name__ == "__main__":
    sys.exit(main())
