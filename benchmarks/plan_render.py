"""Plan + render for 1, 8, 64 and 512 SUs of 32 x 8-GPU servers: seconds and peak RSS per size.

Each size runs in its own process so peak RSS is that size's alone.
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


def one(sus: int, transport: str) -> dict:
    from gen_inventory import generate

    from clusterforge.loading import load_and_plan
    from clusterforge.render import render_all

    with tempfile.TemporaryDirectory() as tmp:
        path = generate(sus, Path(tmp) / "gen.yaml", transport)
        start = time.perf_counter()
        spec, plan, _ = load_and_plan(path)
        planned = time.perf_counter()
        files = render_all(spec, plan)
        rendered = time.perf_counter()
    return {
        "sus": sus, "gpus": plan.summary["gpus"], "devices": len(plan.devices), "links": len(plan.links),
        "files": len(files), "plan_s": round(planned - start, 2), "render_s": round(rendered - planned, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
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
    print(f"{'SUs':>5} {'GPUs':>8} {'devices':>8} {'links':>8} {'files':>7} {'plan s':>7} {'render s':>8}"
          f" {'peak RSS MB':>11}  ({transport})")
    for sus in sizes:
        result = subprocess.run([sys.executable, __file__, "child", str(sus), transport], capture_output=True,
                                text=True)
        if result.returncode:
            print(f"{sus:>5} failed: {result.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(result.stdout)
        print(f"{r['sus']:>5} {r['gpus']:>8} {r['devices']:>8} {r['links']:>8} {r['files']:>7} {r['plan_s']:>7}"
              f" {r['render_s']:>8} {r['peak_rss_mb']:>11}")


if __name__ == "__main__":
    main()
