"""Plan + render for 1, 8, 64 and 512 SUs of 32 x 8-GPU servers: seconds and peak RSS per size.

The inventory is superpod-4su.yaml grown to N SUs (benchmarks/gen_inventory.py, envelope = N):
load + plan, then every renderer `clusterforge render` runs (Ansible inventory and host_vars, asset
CSV, every switch config). Each size runs in its own process so peak RSS is that size's alone;
CPU seconds are printed beside wall seconds because the machine is shared. Large renders fork
workers (fanout.py): `cpu s` includes theirs (`workers`), and `peak RSS MB` is the process's
peak (`own`) plus the largest worker's for every worker, an upper bound on the whole tree's.
Usage: python benchmarks/plan_render.py [SIZES...] [--transport infiniband|roce]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from results import recording  # noqa: E402


def one(sus: int, transport: str) -> dict:
    from gen_inventory import generate

    from clusterforge.fanout import default_workers
    from clusterforge.loading import load_and_plan
    from clusterforge.render import render_all

    with tempfile.TemporaryDirectory() as tmp:
        path = generate(sus, Path(tmp) / "gen.yaml", transport)
        start, cpu = time.perf_counter(), time.process_time()
        spec, plan, _ = load_and_plan(path)
        planned = time.perf_counter()
        files = render_all(plan)
        rendered = time.perf_counter()
    switches = len({p.split("/")[1] for p in files if p.startswith("switches/") and "/_fabric/" not in p})
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the render's forked workers (fanout.py)
    own_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "sus": sus, "gpus": plan.summary.gpus, "devices": len(plan.devices), "links": len(plan.links),
        "switches": switches, "files": len(files), "plan_s": round(planned - start, 2),
        "render_s": round(rendered - planned, 2), "total_s": round(rendered - start, 2),
        "cpu_s": round(time.process_time() - cpu + children.ru_utime + children.ru_stime, 2),
        "workers_cpu_s": round(children.ru_utime + children.ru_stime, 2),
        # the process's peak plus the largest worker's peak for each worker (RSS counts the pages a
        # worker still shares with the parent, so this bounds the tree's peak from above)
        "peak_rss_mb": round(own_rss + (default_workers() - 1) * children.ru_maxrss / 1024, 1),
        "own_rss_mb": round(own_rss, 1),
    }


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    transport = "roce" if "--transport=roce" in sys.argv or "roce" in sys.argv else "infiniband"
    if args and args[0] == "--one":
        return
    if len(sys.argv) > 2 and sys.argv[1] == "child":
        print(json.dumps(one(int(sys.argv[2]), sys.argv[3])))
        return
    sizes = [int(a) for a in args if a.isdigit()] or [1, 8, 64, 512]
    print(f"{'SUs':>5} {'GPUs':>8} {'devices':>8} {'links':>8} {'switches':>8} {'files':>7} {'plan s':>7}"
          f" {'render s':>8} {'total s':>7} {'cpu s':>6} {'workers':>7} {'peak RSS MB':>11} {'own':>6}  ({transport})")
    with recording("plan_render", sizes=sizes, transport=transport) as rec:
        for sus in sizes:
            one_size(sus, transport, rec)


def one_size(sus: int, transport: str, rec) -> None:
    result = subprocess.run([sys.executable, __file__, "child", str(sus), transport], capture_output=True,
                            text=True)
    if result.returncode:
        error = result.stderr.strip().splitlines()[-1:]
        print(f"{sus:>5} failed: {error}")
        rec.record("size", sus=sus, error=" ".join(error))
        return
    r = json.loads(result.stdout)
    rec.record("size", **r)
    print(f"{r['sus']:>5} {r['gpus']:>8,} {r['devices']:>8,} {r['links']:>8,} {r['switches']:>8,}"
          f" {r['files']:>7,} {r['plan_s']:>7} {r['render_s']:>8} {r['total_s']:>7} {r['cpu_s']:>6}"
          f" {r['workers_cpu_s']:>7} {r['peak_rss_mb']:>11} {r['own_rss_mb']:>6}", flush=True)


if __name__ == "__main__":
    main()
