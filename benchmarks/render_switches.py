#!/usr/bin/env python3
"""Benchmark: render every switch config for generated RoCE clusters of 1, 8, 64 and 512 SUs.

The inventory is superpod-4su.yaml turned into a RoCE/SONiC data plane on a 128-port, 400G switch
defined inline in the catalog (so 512 SUs fit a three-tier leaf/spine/core fabric), with big pools
cut from 10.0.0.0/8. Each size runs in its own process so peak RSS is that size's own.

First the envelope the brief asks for (max_sus 512) is tried for every size; if planning fails,
the PlanError is printed and the size is retried with the smallest envelope that holds it
(max_sus = SUs built), so a render figure still exists where any plan does.

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

from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parents[1]
BASE = REPO / "inventory" / "superpod-4su.yaml"
SIZES = (1, 8, 64, 512)
ENVELOPE_MAX_SUS = 512
SWITCH = "bench-128x400"
STORAGE_SPINE = "bench-chassis-256x400"
INLINE_SWITCHES = {
    SWITCH: {"vendor": "benchmark", "description": "128x 400GbE, 51.2 Tb/s class (generated for the benchmark)",
             "ports": 128, "speed_gbps": 400, "lanes_per_port": 4, "max_draw_w": 2400, "height_u": 4,
             "weight_kg": 30, "price": 90000},
    STORAGE_SPINE: {"vendor": "benchmark", "description": "256x 400GbE modular chassis (generated)",
                    "ports": 256, "speed_gbps": 400, "lanes_per_port": 4, "max_draw_w": 9000, "height_u": 8,
                    "weight_kg": 200, "price": 400000},
}
POOLS = {  # disjoint slices of 10.0.0.0/8, each larger than a 512-SU envelope needs
    "data": "10.0.0.0/12", "fabric_links": "10.16.0.0/12", "storage": "10.32.0.0/14",
    "management": "10.36.0.0/14", "oob": "10.40.0.0/14", "loopbacks": "10.44.0.0/16",
}


def inventory(sus: int, max_sus: int) -> dict:
    data = YAML(typ="safe", pure=True).load(BASE.read_text())
    data["name"] = f"bench-{sus}su"
    data["catalog_files"] = [str((BASE.parent / f).resolve()) for f in data["catalog_files"]]
    data["catalog"] = {"switches": INLINE_SWITCHES}
    data["envelope"] = {**data["envelope"], "max_sus": max_sus}
    unit = data["scalable_units"][0]
    data["scalable_units"] = [{**unit, "id": su} for su in range(1, sus + 1)]
    nets = data["networks"]
    nets["data"].update(transport="roce", nos="sonic", mtu=9000, supernet=POOLS["data"], leaf_model=SWITCH,
                        spine_model=SWITCH, core_model=SWITCH)
    nets["storage"].update(supernet=POOLS["storage"], leaf_model=SWITCH, spine_model=STORAGE_SPINE)
    for plane in ("management", "oob"):
        nets[plane]["supernet"] = POOLS[plane]
    nets["fabric_links"], nets["loopbacks"] = POOLS["fabric_links"], POOLS["loopbacks"]
    return data


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def run_one(sus: int, max_sus: int) -> dict:
    """Load, plan and render one size in this process; the result as a dict."""
    from clusterforge.model import load_cluster
    from clusterforge.plan import PlanError, plan_cluster
    from clusterforge.render.switches import render_switches

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"bench-{sus}su.yaml"
        yaml = YAML(typ="safe", pure=True)
        yaml.default_flow_style = False
        with path.open("w") as handle:
            yaml.dump(inventory(sus, max_sus), handle)
        started = time.perf_counter()
        spec, _ = load_cluster(path)
        loaded = time.perf_counter()
        try:
            plan = plan_cluster(spec)
        except PlanError as exc:
            return {"sus": sus, "max_sus": max_sus, "error": "; ".join(m for _, m in exc.problems),
                    "load_s": loaded - started, "peak_rss_mib": peak_rss_mib()}
    planned = time.perf_counter()
    files = render_switches(spec, plan)
    rendered = time.perf_counter()
    switches = len({path.split("/")[1] for path in files if "/_fabric/" not in path})
    return {
        "sus": sus, "max_sus": max_sus, "gpus": plan.summary["gpus"], "switches": switches, "files": len(files),
        "bytes": sum(len(text) for text in files.values()), "load_s": loaded - started, "plan_s": planned - loaded,
        "render_s": rendered - planned, "s_per_switch": (rendered - planned) / max(switches, 1),
        "tiers": plan.fabric["data"].tiers, "peak_rss_mib": peak_rss_mib(),
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
    print(f"{head}: {result['gpus']:>7,} GPUs, {result['tiers']}-tier data, {result['switches']:>6,} switches,"
          f" {result['files']:>6,} files ({result['bytes'] / 2**20:,.1f} MiB) | plan {result['plan_s']:.2f} s,"
          f" render {result['render_s']:.2f} s = {result['s_per_switch'] * 1e3:.3f} ms/switch |"
          f" peak RSS {result['peak_rss_mib']:,.0f} MiB", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--one", nargs=2, type=int, metavar=("SUS", "MAX_SUS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(*args.one)))
        return 0
    for sus in args.sizes:
        result = child(sus, ENVELOPE_MAX_SUS)
        report(result)
        if "error" in result and sus < ENVELOPE_MAX_SUS:
            report(child(sus, sus))
    return 0


if __name__ == "__main__":
    sys.exit(main())
