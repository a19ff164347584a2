"""`pulumi preview` of the cluster stack for lab, roce-128gpu and superpod-4su: seconds and resource count.

Target `files`, provisioning and verification off, a throwaway local backend. Per inventory:
  preview  a fresh stack (every resource a create) — what the first review of a change costs
  up       writing every switch config (skipped with --preview-only); its state saved as `clusterforge up
           --checkpoints auto|step|end` saves it (default auto: once, when the run closes, for this stack)
  steady   preview again after up (every resource `same`, dynamic resources diffed by their provider)
Goal: superpod-4su preview under 60 s (and 64 SUs, `--sus 64`, under 60 s).
CPU s: user + system of the whole preview (the pulumi engine, the program, its providers), from
getrusage(RUSAGE_CHILDREN) around it. `--sdk-debug-too` previews each inventory twice in one run: first
with the Pulumi SDK's per-resource debug messages kept (CLUSTERFORGE_PULUMI_SDK_DEBUG=1, as before
clusterforge.pulumi.sdklog), then dropped (the default), so the two are measured in the same window.
`--sdk-wait-too` does the same for the SDK's end-of-program wait for outputs: first its own loop
(CLUSTERFORGE_PULUMI_SDK_WAIT=1, quadratic in the number of outputs), then clusterforge.pulumi.sdkwait's.

Usage: python benchmarks/pulumi_preview.py [INVENTORY ...] [--sus N ...] [--preview-only] [--checkpoints auto|step|end]
       [--sdk-debug-too | --sdk-wait-too] [--json]
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

REPO = Path(__file__).resolve().parents[1]
DEFAULT = ["inventory/lab.yaml", "inventory/roce-128gpu.yaml", "inventory/superpod-4su.yaml"]
GOAL_S = {"superpod-4su": 60.0, "gen-64su": 60.0}
KEEP_ENV = "CLUSTERFORGE_PULUMI_SDK_DEBUG"  # clusterforge.pulumi.sdklog.KEEP_ENV
WAIT_ENV = "CLUSTERFORGE_PULUMI_SDK_WAIT"  # clusterforge.pulumi.sdkwait.KEEP_ENV


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(inventory: Path, state: Path, preview_only: bool, checkpoints_wanted: str) -> dict:
    from clusterforge.pulumi import automation, checkpoints

    (state / "pulumi").mkdir(exist_ok=True)
    backend = automation.Backend.resolve(state, f"file://{state / 'pulumi'}")  # never the user's backend
    stack = automation.open_stack(inventory.stem, {
        "inventory": str(inventory), "target": "files", "provision": "false", "verify": "false",
        "switchConfigDir": str(state / "switches" / inventory.stem),
    }, backend)  # fmt: skip
    start, cpu = time.perf_counter(), _children_cpu()
    fresh = automation.preview(stack)
    result = {"inventory": inventory.stem, "resources": fresh.summary.count("create"),
              "preview_s": round(time.perf_counter() - start, 1), "preview_cpu_s": round(_children_cpu() - cpu, 1),
              "sdk_debug": os.environ.get(KEEP_ENV) == "1", "sdk_wait": os.environ.get(WAIT_ENV) == "1"}
    if not preview_only:
        # as `clusterforge up --checkpoints WANTED` chooses (auto: once at the end for this files-only stack)
        mode = checkpoints.choose(checkpoints_wanted, automation.managed_config(stack)).mode
        start, cpu = time.perf_counter(), _children_cpu()
        automation.up(stack, checkpoints=mode)
        result.update(checkpoints=mode, up_s=round(time.perf_counter() - start, 1),
                      up_cpu_s=round(_children_cpu() - cpu, 1))
        start = time.perf_counter()
        steady = automation.preview(stack)
        result["steady_preview_s"] = round(time.perf_counter() - start, 1)
        result["steady_changes"] = steady.summary.changes
        start, cpu = time.perf_counter(), _children_cpu()
        automation.destroy(stack, checkpoints=mode)
        result.update(destroy_s=round(time.perf_counter() - start, 1), destroy_cpu_s=round(_children_cpu() - cpu, 1))
    goal = GOAL_S.get(inventory.stem)
    if goal is not None:
        result["goal_s"] = goal
        result["goal_met"] = result["preview_s"] < goal and result.get("steady_preview_s", 0) < goal
    return result


def main() -> int:
    args = sys.argv[1:]
    as_json, preview_only = "--json" in args, "--preview-only" in args
    wanted = "end" if "--skip-checkpoints" in args else next(
        (args[i + 1] for i, a in enumerate(args) if a == "--checkpoints"), "auto")
    both, wait_too = "--sdk-debug-too" in args, "--sdk-wait-too" in args
    toggled = WAIT_ENV if wait_too else KEEP_ENV  # what the first of each pair keeps
    sus = [int(args[i + 1]) for i, a in enumerate(args) if a == "--sus"]
    named = [a for i, a in enumerate(args)
             if not a.startswith("--") and (i == 0 or args[i - 1] not in ("--sus", "--checkpoints"))]
    rows = []
    with tempfile.TemporaryDirectory(prefix="cf-bench-pulumi-") as tmp:
        state = Path(tmp)
        inventories = [REPO / p for p in (named or ([] if sus else DEFAULT))]
        if sus:
            from gen_inventory import generate

            inventories += [generate(n, state / f"gen-{n}su.yaml", "infiniband") for n in sus]
        if not as_json:
            print(f"load average {os.getloadavg()[0]:.2f} at start")
            column = "SDK wait" if wait_too else "SDK debug"
            print(f"{'inventory':<16} {column:>9} {'resources':>9} {'preview s':>9} {'CPU s':>6} {'up s':>6}"
                  f" {'saves':>5} {'steady s':>8}  goal")
        for inventory in inventories:
            for keep in ((True, False) if both or wait_too else (False,)):
                os.environ.pop(toggled, None)
                if keep:
                    os.environ[toggled] = "1"
                row = measure(Path(inventory), state, preview_only or ((both or wait_too) and keep), wanted)
                os.environ.pop(toggled, None)
                rows.append(row)
                if not as_json:
                    goal = "" if "goal_s" not in row else (f"< {row['goal_s']:.0f} s "
                                                           + ("met" if row["goal_met"] else "MISSED"))
                    kept = ("SDK's" if keep else "linear") if wait_too else ("kept" if keep else "dropped")
                    print(f"{row['inventory']:<16} {kept:>9} {row['resources']:>9}"
                          f" {row['preview_s']:>9} {row['preview_cpu_s']:>6} {row.get('up_s', '-'):>6}"
                          f" {row.get('checkpoints', '-'):>5} {row.get('steady_preview_s', '-'):>8}  {goal}"
                          f"  load {os.getloadavg()[0]:.1f}",
                          flush=True)
        if not as_json:
            print(f"load average {os.getloadavg()[0]:.2f} at end")
    if as_json:
        print(json.dumps(rows, indent=1))
    return 0 if all(row.get("goal_met", True) for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
