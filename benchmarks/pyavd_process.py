#!/usr/bin/env python3
"""clusterforge against Arista's pyavd as whole processes: start to exit, wall and CPU, at several sizes.

The fabric is benchmarks/pyavd_compare.py's EOS leaf-spine (L leaves, eBGP over /31s to a chassis spine
per uplink, routed host ports, loopbacks, management VRF), at `--sus` sizes of 8 leaves each:

* clusterforge: `clusterforge render INVENTORY --out DIR`, the inventory written out as one
  self-contained YAML file (roce-128gpu.yaml grown to N SUs, data plane on EOS). The process loads,
  plans, checks and writes everything the command writes: every switch's config (data, storage,
  management, oob), the servers' host_vars, the Ansible inventory and the asset register. A second
  column times `render ... --switches-only`: the switch configs alone (still every plane's switches,
  and the same load, plan and checks), the output closest to pyavd's.
* pyavd (the `bench` extra): one process that reads the same fabric as AVD inputs (JSON) and runs
  get_avd_facts, get_device_structured_config and get_device_config for every switch (eos_designs and
  eos_cli_config_gen, the pipeline AVD runs) and writes each config to a file.

Both are timed from outside (wait4: CPU of the process and anything it forked), so interpreter
start-up and imports count on both sides. The per-switch figures divide each side's time by the
data-plane switches both render (pyavd renders only those; clusterforge renders the other planes'
switches too, so the ratio overstates its share); the marginal figures are (time at the largest size -
time at the smallest) / (switches added). Each size runs `--rounds` times, the sides interleaved; the
fastest of each is kept. Goal: clusterforge at most 0.01 of pyavd's CPU per switch at 500+ switches, render linear.

`--old-src DIR` also times `clusterforge render` from another source tree (an older commit's `src/`,
exported with `git archive` together with its templates/ and pyproject.toml, so it renders with its own
templates) in the same rounds, and compares the SHA-256 of every file both write: old against new in
one window, on the same load. `--no-avd` leaves pyavd out (old against new only; no ratio printed).

    python benchmarks/pyavd_process.py                       # 8, 32 and 64 SUs (64, 256, 512 leaves)
    python benchmarks/pyavd_process.py --sus 2 8 --rounds 1
    python benchmarks/pyavd_process.py --old-src /tmp/old/src --no-avd --rounds 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from results import recording  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def write_inventory(sus: int, path: Path) -> dict:
    """The clusterforge inventory of `sus` SUs and the shape pyavd needs to render the same data plane."""
    import yaml
    from pyavd_compare import our_spec

    from clusterforge.plan import plan_cluster

    spec = our_spec(sus)
    data = spec.model_dump(mode="json")
    data["catalog_files"] = []
    if "slurm" not in data.get("schedulers", ()):
        data.pop("slurm", None)  # a dump writes the defaults out; declared without Slurm they are refused
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=200))
    plan = plan_cluster(spec)
    fabric = plan.fabric["data"]
    leaf = next(d for d in plan.devices if d.plane == "data" and d.kind == "leaf")
    return {"leaves": fabric.leaves, "spines": fabric.spines,
            "uplinks": sum(1 for link in plan.links if link.a.device == leaf.name and link.tier == "data-leaf-spine"),
            "hosts": sum(1 for i in leaf.interfaces if i.rail is not None),
            "switches": sum(1 for d in plan.devices if d.kind in ("leaf", "spine", "core", "aggregation", "access")),
            "data_switches": fabric.leaves + fabric.spines + fabric.cores}


def avd_child(inputs_path: Path, out: Path) -> None:
    """The pyavd process: read the inputs, render every switch, write its config."""
    import pyavd

    inputs = json.loads(inputs_path.read_text())
    facts = pyavd.get_avd_facts(inputs)
    out.mkdir(parents=True, exist_ok=True)
    for name, device in inputs.items():
        config = pyavd.get_device_config(pyavd.get_device_structured_config(name, device, facts))
        (out / f"{name}.cfg").write_text(config)


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one whole process; CPU from wait4 (user + system, its forked workers included)."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            errors.seek(0)
            raise SystemExit(f"{argv[3:5]} failed (exit {proc.returncode}): {errors.read().decode()[-1500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def tree_digest(root: Path) -> str:
    """SHA-256 over every file's relative path and content under root, in path order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def marginal(rows: list[tuple]) -> dict:
    """CPU ms per data-plane switch added, smallest size to largest; {} with fewer than two sizes."""
    if len(rows) < 2:
        return {}
    (_, n0, o0, a0, p0, s0), (_, n1, o1, a1, p1, s1) = rows[0], rows[-1]
    ours_ms = (o1[1] - o0[1]) / (n1 - n0) * 1e3
    sw_ms = (s1[1] - s0[1]) / (n1 - n0) * 1e3
    old_ms = (p1[1] - p0[1]) / (n1 - n0) * 1e3 if p0 is not None and p1 is not None else None
    avd_ms = (a1[1] - a0[1]) / (n1 - n0) * 1e3 if a0 is not None and a1 is not None else None
    return {"from_switches": n0, "to_switches": n1, "ours_ms": ours_ms, "switches_only_ms": sw_ms, "old_ms": old_ms,
            "avd_ms": avd_ms, "ratio": ours_ms / avd_ms if avd_ms else None,
            "ratio_switches_only": sw_ms / avd_ms if avd_ms else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sus", type=int, nargs="+", default=[8, 32, 64], help="sizes in SUs of 8 leaves")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--old-src", type=Path, help="also time clusterforge from this source tree (old vs new)")
    parser.add_argument("--no-avd", action="store_true", help="leave pyavd out (with --old-src: old vs new only)")
    parser.add_argument("--avd-child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.avd_child:
        avd_child(*args.avd_child)
        return 0
    from pyavd_compare import avd_inputs

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    old_env = {**env, "PYTHONPATH": str(args.old_src.resolve())} if args.old_src else None
    for tree in [REPO / "src", *([args.old_src] if args.old_src else [])]:  # bytecode written before any timing
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], check=True, env=env)
    ours_argv = [sys.executable, "-c", "import sys; from clusterforge.cli import main; sys.exit(main())", "render"]
    print(f"load average {os.getloadavg()[0]:.2f} at start; best of {args.rounds} rounds, sides interleaved")
    print(f"{'SUs':>4} {'data sw':>7} {'all sw':>6} | {'clusterforge wall':>17} {'cpu':>6} {'cpu ms/sw':>9} |"
          f" {'sw cpu':>6} {'cpu ms/sw':>9} |"
          + (f" {'old wall':>8} {'cpu':>6} {'cpu ms/sw':>9} {'new/old':>7} {'files':>9} |" if old_env else "")
          + ("" if args.no_avd else f" {'pyavd wall':>10} {'cpu':>7} {'cpu ms/sw':>9} | {'ratio all':>9}"
                                    f" {'ratio sw':>9}"),
          flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="cf-pyavd-") as tmp, recording(
            "pyavd_process", sus=args.sus, rounds=args.rounds, avd=not args.no_avd,
            old_src=str(args.old_src) if args.old_src else None) as rec:
        for sus in args.sus:
            inventory = Path(tmp) / f"eos-{sus}su.yaml"
            shape = write_inventory(sus, inventory)
            inputs = Path(tmp) / f"avd-{sus}su.json"
            inputs.write_text(json.dumps(avd_inputs(shape["leaves"], shape["spines"], shape["uplinks"],
                                                    shape["hosts"])))
            ours, ours_sw, avd, old = [], [], [], []
            same = True
            for _ in range(args.rounds):
                out = Path(tmp) / "out"
                ours.append(timed([*ours_argv, str(inventory), "--out", str(out / "cf")], env))
                ours_sw.append(timed([*ours_argv, str(inventory), "--out", str(out / "sw"), "--switches-only"], env))
                if old_env is not None:
                    old.append(timed([*ours_argv, str(inventory), "--out", str(out / "old")], old_env))
                    same = same and tree_digest(out / "cf") == tree_digest(out / "old")
                if not args.no_avd:
                    avd.append(timed([sys.executable, __file__, "--avd-child", str(inputs), str(out / "avd")], env))
                shutil.rmtree(out, ignore_errors=True)
            switches = shape["leaves"] + shape["spines"]
            best_ours = min(ours, key=lambda r: r[1])
            best_sw = min(ours_sw, key=lambda r: r[1])
            best_avd = min(avd, key=lambda r: r[1]) if avd else None
            best_old = min(old, key=lambda r: r[1]) if old else None
            rows.append((sus, switches, best_ours, best_avd, best_old, best_sw))
            line = (f"{sus:>4} {switches:>7} {shape['switches']:>6} | {best_ours[0]:>17.2f} {best_ours[1]:>6.2f}"
                    f" {best_ours[1] / switches * 1e3:>9.2f} | {best_sw[1]:>6.2f}"
                    f" {best_sw[1] / switches * 1e3:>9.2f} |")
            if best_old is not None:
                line += (f" {best_old[0]:>8.2f} {best_old[1]:>6.2f} {best_old[1] / switches * 1e3:>9.2f}"
                         f" {best_ours[1] / best_old[1]:>7.3f} {'identical' if same else 'DIFFER':>9} |")
            if best_avd is not None:
                line += (f" {best_avd[0]:>10.2f} {best_avd[1]:>7.2f} {best_avd[1] / switches * 1e3:>9.2f} |"
                         f" {best_ours[1] / best_avd[1]:>9.4f} {best_sw[1] / best_avd[1]:>9.4f}")
            print(line, flush=True)
            rec.record("size", sus=sus, data_switches=switches, all_switches=shape["switches"],
                       ours_wall_s=best_ours[0], ours_cpu_s=best_ours[1], switches_only_cpu_s=best_sw[1],
                       avd_wall_s=best_avd[0] if best_avd else None, avd_cpu_s=best_avd[1] if best_avd else None,
                       old_wall_s=best_old[0] if best_old else None, old_cpu_s=best_old[1] if best_old else None,
                       old_identical=same if best_old else None)
        if len(rows) > 1:
            rec.record("marginal", **marginal(rows))
    margin = marginal(rows)
    if margin:
        line = (f"marginal CPU per data-plane switch, {margin['from_switches']} -> {margin['to_switches']}:"
                f" clusterforge {margin['ours_ms']:.2f} ms (--switches-only {margin['switches_only_ms']:.2f} ms)")
        if margin["old_ms"] is not None:
            line += f", old clusterforge {margin['old_ms']:.2f} ms"
        if margin["avd_ms"] is not None:
            line += (f", pyavd {margin['avd_ms']:.2f} ms, ratio {margin['ratio']:.4f}"
                     f" ({margin['ratio_switches_only']:.4f})")
        print(line)
        print("clusterforge CPU per switch by size (linear render: roughly flat or falling): "
              + ", ".join(f"{o[1] / n * 1e3:.2f} ms at {n}" for _, n, o, _, _, _ in rows))
    print(f"load average {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
