#!/usr/bin/env python3
"""Every example in inventory/ grown to 64, 128 and 512 SUs: plan, fabric checks, render, tiers.

Each example is grown with clusterforge.model.scale.scaled (SU k copies the declared SU, the
envelope's max_sus = N, pools re-cut from 10.0.0.0/8; past 64 SUs with chassis cores declared for
the data and storage planes, since a 64-port core cannot take a link from every SU; --no-chassis
shows the refusal instead) and runs in its own process: plan_cluster,
check_fabric (must find nothing), then every renderer (Ansible tree, assets, switch configs).
The tests run the same at 64 and 128 SUs (tests/fabric/test_scaled_examples.py); 512 lives here.

    python benchmarks/scale_examples.py                          # every example, 64 128 512
    python benchmarks/scale_examples.py --sizes 512 --examples lab
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import recording  # noqa: E402

SIZES = (64, 128, 512)


def run_one(name: str, sus: int, chassis: bool) -> dict:
    from clusterforge.model import load_cluster
    from clusterforge.model.scale import scaled
    from clusterforge.plan import plan_cluster
    from clusterforge.plan.fabric_checks import check_fabric
    from clusterforge.render import render_all

    spec = scaled(load_cluster(REPO / "inventory" / f"{name}.yaml")[0], sus, chassis_cores=chassis)
    started, cpu = time.perf_counter(), time.process_time()
    plan = plan_cluster(spec)
    planned = time.perf_counter()
    problems = check_fabric(plan)
    checked = time.perf_counter()
    files = render_all(plan)
    rendered = time.perf_counter()
    switches = len({p.split("/")[1] for p in files if p.startswith("switches/") and "/_fabric/" not in p})
    return {"example": name, "sus": sus, "gpus": plan.summary.gpus, "devices": len(plan.devices),
            "switches": switches, "files": len(files), "problems": problems[:3], "problem_count": len(problems),
            "tiers": {p: plan.fabric[p].tiers for p in ("data", "storage")}, "plan_s": planned - started,
            "check_s": checked - planned, "render_s": rendered - checked, "cpu_s": time.process_time() - cpu,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--examples", nargs="+", default=sorted(p.stem for p in (REPO / "inventory").glob("*.yaml")))
    parser.add_argument("--no-chassis", action="store_true", help="never declare chassis cores")
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.one[2] == "chassis")))
        return 0
    with recording("scale_examples", sizes=args.sizes, examples=args.examples, chassis=not args.no_chassis) as rec:
        return run_all(args, rec)


def run_all(args: argparse.Namespace, rec) -> int:
    failed = 0
    print(f"{'example':<14} {'SUs':>4} {'cores':>7} {'GPUs':>8} {'devices':>8} {'switches':>8} {'tiers d/s':>9}"
          f" {'plan s':>7} {'check s':>7} {'render s':>8} {'cpu s':>6} {'RSS MiB':>7}  fabric checks")
    for name in args.examples:
        for sus in args.sizes:
            chassis = "chassis" if sus > 64 and not args.no_chassis else "-"
            proc = subprocess.run([sys.executable, __file__, "--one", name, str(sus), chassis], capture_output=True,
                                  text=True, check=False)
            if proc.returncode:
                failed += 1
                error = proc.stderr.strip().splitlines()[-1:]
                print(f"{name:<14} {sus:>4} {chassis:>7} FAILED: {error}", flush=True)
                rec.record("example", example=name, sus=sus, chassis=chassis == "chassis", error=" ".join(error))
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            rec.record("example", **r, chassis=chassis == "chassis")
            failed += bool(r["problem_count"])
            verdict = "clean" if not r["problem_count"] else f"{r['problem_count']} problems: {r['problems']}"
            print(f"{name:<14} {sus:>4} {chassis:>7} {r['gpus']:>8,} {r['devices']:>8,} {r['switches']:>8,}"
                  f" {r['tiers']['data']:>5}/{r['tiers']['storage']:<3} {r['plan_s']:>7.2f} {r['check_s']:>7.2f}"
                  f" {r['render_s']:>8.2f} {r['cpu_s']:>6.1f} {r['peak_rss_mib']:>7,.0f}  {verdict}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
