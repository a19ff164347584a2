#!/usr/bin/env python3
"""docs/benchmarks.md from one `make bench` run: the machine, its load and the figures the benchmark scripts wrote.

    python benchmarks/write_page.py start     # empty the results directory; record the machine and its load
    ... each benchmark script, with CLUSTERFORGE_BENCH_RESULTS naming the directory (benchmarks/results.py) ...
    python benchmarks/write_page.py write     # record the load at the end; write docs/benchmarks.md

Every figure on the page is read from the run's records; what is written here is the prose around them. A
section whose records are missing (a script that failed or was not run) stops the page with a message naming
it, so the page is never a mix of runs. `--results DIR` (default: the environment's
CLUSTERFORGE_BENCH_RESULTS, else .state/bench-results) and `--out FILE` (default docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import ENV, read_results  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MACHINE = "machine.json"


class MissingRecord(Exception):
    """The results lack a record the page needs."""


# ---------------------------------------------------------------- the machine


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def machine_facts() -> dict:
    """What the run was measured on, at its start."""
    return {"cpus": os.cpu_count(), "cpu_model": _cpu_model(), "memory_gib": _memory_gib(),
            "load_start": [round(x, 2) for x in os.getloadavg()],
            "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "commit": _git("rev-parse", "--short=12", "HEAD"), "dirty": bool(_git("status", "--porcelain")),
            "python": platform.python_version(), "pyavd": _version("pyavd")}


# ---------------------------------------------------------------- formatting


def _num(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}"


def _table(header: list[str], align: str, rows: list[list[str]]) -> str:
    """A Markdown table; align holds one character a column: l (left) or r (right)."""
    marks = ["---" if a == "l" else "---:" for a in align]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in [header, marks, *rows])


def _only(records: list[dict], kind: str, bench: str) -> list[dict]:
    found = [r for r in records if r.get("kind") == kind]
    if not found:
        raise MissingRecord(f"{bench}: no `{kind}` record (did benchmarks/{bench}.py run to the end?)")
    return found


def _rows(records: list[dict], kind: str, bench: str, width: int, cells: Callable[[dict], list[str]],
          first: Callable[[dict], str]) -> list[list[str]]:
    """A table row a record of `kind`: `cells` of it, or where the record says it failed, `first` of it and its
    error, the other cells empty."""
    return [[first(r), f"failed: {r['error']}", *[""] * (width - 2)] if "error" in r else cells(r)
            for r in _only(records, kind, bench)]


def _run(results: dict[str, list[dict]], bench: str) -> tuple[dict, list[dict]]:
    """The `run` record of bench and its other records."""
    if bench not in results:
        raise MissingRecord(f"{bench}: no results (benchmarks/{bench}.py did not run with {ENV} set)")
    records = results[bench]
    return _only(records, "run", bench)[-1], records


def _rounds(run: dict) -> str:
    rounds = run["params"]["rounds"]
    return f"{rounds} round" + ("" if rounds == 1 else "s")


def _load(run: dict) -> str:
    wall = run["wall_s"]
    return f"load {run['load_start']:.1f} → {run['load_end']:.1f}, {_num(wall, 1 if wall < 10 else 0)} s in all"


# ---------------------------------------------------------------- sections


def _plan_render(results: dict[str, list[dict]]) -> str:
    run, records = _run(results, "plan_render")
    rows = _rows(records, "size", "plan_render", 13, lambda r: [
        _num(r["sus"]), _num(r["gpus"]), _num(r["devices"]), _num(r["links"]), _num(r["switches"]), _num(r["files"]),
        _num(r["plan_s"], 2), _num(r["render_s"], 2), _num(r["total_s"], 2), _num(r["cpu_s"], 2),
        _num(r["workers_cpu_s"], 2), _num(r["peak_rss_mb"]), _num(r["own_rss_mb"])], lambda r: _num(r["sus"]))
    transport = "NDR InfiniBand" if run["params"]["transport"] == "infiniband" else "RoCE"
    return (f"`python benchmarks/plan_render.py`: N SUs × 32 DGX H100 on {transport}, each size in its own process"
            f" ({_load(run)}). `CPU s` includes the forked render workers' (`workers`); `peak RSS` is the process's"
            " own peak plus the largest worker's for every worker, an upper bound on the tree's.\n\n"
            + _table(["SUs", "GPUs", "devices", "links", "switches", "files", "plan s", "render s", "total s",
                      "CPU s", "workers CPU s", "peak RSS MB", "own RSS MB"], "r" * 13, rows))


def _render_switches(results: dict[str, list[dict]]) -> str:
    run, records = _run(results, "render_switches")
    rows = _rows(records, "size", "render_switches", 8, lambda r: [
        _num(r["sus"]), _num(r["switches"]), _num(r["bytes"] / 2**20, 1), _num(r["plan_s"], 2), _num(r["render_s"], 2),
        _num(r["render_cpu_s"], 2), _num(r["s_per_switch"] * 1e3, 1), f"{_num(r['peak_rss_mib'])} MiB"],
        lambda r: f"{_num(r['sus'])} (envelope {r['max_sus']})")
    return (f"`python benchmarks/render_switches.py`: RoCE/SONiC, envelope {run['params']['envelope_max_sus']} SUs"
            f" at every size, so only leaves are added ({_load(run)}):\n\n"
            + _table(["SUs", "switches", "config MiB", "plan s", "render s", "render CPU s", "ms/switch (wall)",
                      "peak RSS"], "r" * 8, rows))


def _scale_examples(results: dict[str, list[dict]]) -> str:
    run, records = _run(results, "scale_examples")
    examples = _only(records, "example", "scale_examples")
    clean = [r for r in examples if "error" not in r and not r["problem_count"]]
    failed = [r for r in examples if r not in clean]
    sizes = ", ".join(str(s) for s in run["params"]["sizes"])
    chassis = sorted({r["sus"] for r in examples if r["chassis"]})
    verdict = (f"all {len(examples)} plan, pass the fabric checks and render" if not failed else
               f"{len(clean)} of {len(examples)} plan, pass the fabric checks and render; not clean: "
               + "; ".join(f"{r['example']} at {r['sus']} SUs ({r.get('error') or r['problem_count']})"
                           for r in failed))
    rows = [[f"`{r['example']}`", _num(r["sus"]), "yes" if r["chassis"] else "no", *(
        [f"failed: {r['error']}", *[""] * 7] if "error" in r else
        [_num(r["gpus"]), _num(r["switches"]), f"{r['tiers']['data']}/{r['tiers']['storage']}", _num(r["plan_s"], 2),
         _num(r["check_s"], 2), _num(r["render_s"], 2), _num(r["cpu_s"], 1),
         "clean" if not r["problem_count"] else f"{r['problem_count']} problems"])] for r in examples]
    return (f"`python benchmarks/scale_examples.py`: every example in `inventory/` grown to {sizes} SUs"
            f" ({', '.join(map(str, chassis)) or 'no size'} with chassis cores) plans, passes the fabric checks"
            f" and renders, each in its own process ({_load(run)}): {verdict}. Without chassis cores"
            " (`--no-chassis`, not part of `make bench`) a size past 64 SUs is refused.\n\n"
            + _table(["example", "SUs", "chassis cores", "GPUs", "switches", "tiers data/storage", "plan s",
                      "check s", "render s", "CPU s", "fabric checks"], "lrlrrlrrrrl", rows))


def _commands_scale(results: dict[str, list[dict]]) -> str:
    run, records = _run(results, "commands_scale")
    def name(r: dict) -> str:
        return f"`{r['command']}`" + (f" ({r['label']})" if r["label"] else "")

    rows = _rows(records, "command", "commands_scale", 8, lambda r: [
        name(r), _num(r["wall_s"], 1), _num(r["cpu_s"], 1), _num(r["tree_rss_mb"]), _num(r["tree_pss_mb"]),
        _num(r["max_process_mb"]), _num(r["output_mb"], 1), r["sha256"]], name)
    return (f"## Commands at {run['params']['sus']} SUs\n\n"
            f"`python benchmarks/commands_scale.py --sus {run['params']['sus']}` (whole processes; CPU from wait4"
            " with forked workers; memory the process tree's peak, sampled every 50 ms; `os.sync()` after each run;"
            f" {_load(run)}):\n\n"
            + _table(["command", "wall s", "CPU s", "tree RSS peak MB", "tree PSS peak MB", "max process MB",
                      "output MB", "sha256"], "lrrrrrrl", rows))


def _pyavd_compare(results: dict[str, list[dict]]) -> str:
    run, records = _run(results, "pyavd_compare")
    r = _only(records, "result", "pyavd_compare")[-1]
    ours, avd = r["ours"], r["avd"]
    lines = [f"  clusterforge  {ours['switches']:>5} switches {ours['seconds']:8.2f} s (plan {ours['plan_s']:.2f} s,"
             f" cpu {ours['cpu_s']:.2f} s) = {r['ours_ms_per_switch']:7.2f} ms/switch,"
             f" {ours['bytes'] / 2**20:.1f} MiB of config",
             f"  pyavd {avd['version']:<7} {avd['switches']:>5} switches {avd['seconds']:8.2f} s (facts"
             f" {avd['facts_s']:.2f} s, cpu {avd['cpu_s']:.2f} s) = {r['avd_ms_per_switch']:7.2f} ms/switch,"
             f" {avd['bytes'] / 2**20:.1f} MiB of config",
             f"  per-switch ratio (pyavd / clusterforge): {r['ratio_wall']:.1f}x wall, {r['ratio_cpu']:.1f}x cpu"]
    return (f"`python benchmarks/pyavd_compare.py`: {ours['leaves']} EOS leaves × {ours['uplinks']} uplinks to"
            f" {ours['spines']} spines, {ours['host_ports']} routed host ports per leaf, eBGP underlay, each side in"
            f" its own process, best of {_rounds(run)} interleaved ({_load(run)}):\n\n```\n"
            + "\n".join(lines) + "\n```")


def _pyavd_process(results: dict[str, list[dict]]) -> str:
    run, records = _run(results, "pyavd_process")
    rows = []
    for r in _only(records, "size", "pyavd_process"):
        n = r["data_switches"]
        avd = ([_num(r["avd_wall_s"], 2), _num(r["avd_cpu_s"], 2), _num(r["avd_cpu_s"] / n * 1e3, 2),
                f"{r['ours_cpu_s'] / r['avd_cpu_s']:.4f}", f"{r['switches_only_cpu_s'] / r['avd_cpu_s']:.4f}"]
               if r["avd_cpu_s"] is not None else ["—"] * 5)
        rows.append([_num(r["sus"]), _num(n), _num(r["all_switches"]), _num(r["ours_wall_s"], 2),
                     _num(r["ours_cpu_s"], 2), _num(r["ours_cpu_s"] / n * 1e3, 2), _num(r["switches_only_cpu_s"], 2),
                     _num(r["switches_only_cpu_s"] / n * 1e3, 2), *avd])
    text = (f"`python benchmarks/pyavd_process.py`, whole processes (wall, and CPU from wait4), best of"
            f" {_rounds(run)} with the sides interleaved ({_load(run)}); per-switch figures divide"
            " by the data-plane switches both render, the ratios are clusterforge CPU over pyavd CPU:\n\n"
            + _table(["SUs", "data-plane switches", "all switches", "clusterforge wall s", "CPU s", "CPU ms/switch",
                      "`--switches-only` CPU s", "CPU ms/switch", "pyavd wall s", "CPU s", "CPU ms/switch",
                      "ratio all", "ratio switches only"], "r" * 13, rows))
    margins = [r for r in records if r.get("kind") == "marginal"]
    if margins:
        m = margins[-1]
        text += (f"\n\nMarginal CPU per data-plane switch, {m['from_switches']} → {m['to_switches']}: clusterforge"
                 f" {m['ours_ms']:.2f} ms (`--switches-only` {m['switches_only_ms']:.2f} ms)")
        if m["avd_ms"] is not None:
            text += (f", pyavd {m['avd_ms']:.2f} ms; ratio {m['ratio']:.4f}"
                     f" ({m['ratio_switches_only']:.4f} switches only)")
        text += "."
    return text


def _cli_startup(results: dict[str, list[dict]]) -> str:
    run, records = _run(results, "cli_startup")
    rows = [[f"`{r['command']}`" + (f", {r['note']}" if r["note"] else "")
             + ("" if r["exit_statuses"] == [0] else f" (exit {r['exit_statuses']})"),
             f"{r['wall_min']:.3f} s", f"{r['wall_median']:.3f} s", f"{r['cpu_min']:.3f} s", f"{r['cpu_median']:.3f} s"]
            for r in _only(records, "command", "cli_startup")]
    return (f"`python benchmarks/cli_startup.py`, {_rounds(run)} after one untimed run"
            f" ({_load(run)}); `no bytecode` is a copy of the source tree without `__pycache__`, as a checkout run"
            " with PYTHONDONTWRITEBYTECODE=1 compiles every module it imports:\n\n"
            + _table(["command", "wall min", "wall median", "CPU min", "CPU median"], "lrrrr", rows))


# the page: fixed prose, and a function for every figure it quotes
SECTIONS: list[tuple[str, list[Callable[[dict[str, list[dict]]], str]]]] = [
    ("## Plan and render", [_plan_render, _render_switches, _scale_examples]),
    ("", [_commands_scale]),
    ("## Against pyavd", [_pyavd_compare, _pyavd_process]),
    ("## CLI start-up", [_cli_startup]),
]


def _machine(machine: dict) -> str:
    memory = f"{machine['memory_gib']:,.1f} GiB" if machine.get("memory_gib") else "unknown"
    start, end = machine["load_start"], machine["load_end"]
    commit = machine["commit"] + (" with uncommitted changes" if machine["dirty"] else "")
    return _table(["", ""], "ll", [
        ["CPU", f"{machine['cpus']} × {machine['cpu_model']}"],
        ["memory", memory],
        ["load average (1, 5, 15 min)", f"{' / '.join(f'{x:.2f}' for x in start)} at the start,"
                                        f" {' / '.join(f'{x:.2f}' for x in end)} at the end"],
        ["run", f"{machine['started']} to {machine['finished']}"],
        ["commit", f"`{commit}`"],
        ["Python, pyavd", f"{machine['python']}, {machine['pyavd'] or 'not installed'}"],
    ])


def build_page(machine: dict, results: dict[str, list[dict]]) -> str:
    """docs/benchmarks.md from the machine facts and every script's records; MissingRecord if any is missing."""
    for key in ("cpus", "cpu_model", "load_start", "load_end", "started", "finished", "commit"):
        if key not in machine:
            raise MissingRecord(f"machine: no `{key}` (run `write_page.py start` before and `write` after)")
    parts = [
        "# Benchmarks",
        "Written by `make bench` (benchmarks/write_page.py) from one run: every figure below is read from the"
        " records the scripts in `benchmarks/` wrote during that run, on the machine below. Each script's section"
        " names its own load (the 1-minute load average at its start and end); where the machine is shared, CPU"
        " seconds are given beside wall seconds, since wall time is then the machine's share rather than the"
        " command's cost. Ratios are measured in the same run and printed, never asserted.",
        _machine(machine),
        "Figures that need the lab, root, bare metal or a GPU (`make up`, `make test`, the lab, Kubernetes, bare"
        " metal, Pulumi, GPU acceptance) are measured by their own scripts, not by `make bench`: see"
        " [measurements.md](measurements.md).",
    ]
    for title, sections in SECTIONS:
        if title:
            parts.append(title)
        parts.extend(section(results) for section in sections)
    return "\n\n".join(parts) + "\n"


def _results_dir(named: Path | None) -> Path:
    if named:
        return named.resolve()
    return Path(os.environ[ENV]).resolve() if os.environ.get(ENV) else REPO / ".state" / "bench-results"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["start", "write"])
    parser.add_argument("--results", type=Path, help=f"results directory (default: ${ENV}, else .state/bench-results)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    args = parser.parse_args()
    directory = _results_dir(args.results)
    if args.step == "start":
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        (directory / MACHINE).write_text(json.dumps(machine_facts(), indent=1))
        print(f"results in {directory}")
        return 0
    if not (directory / MACHINE).is_file():
        raise SystemExit(f"{directory / MACHINE} is missing: run `write_page.py start` before the benchmarks")
    machine = json.loads((directory / MACHINE).read_text())
    machine.update(load_end=[round(x, 2) for x in os.getloadavg()],
                   finished=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    try:
        page = build_page(machine, read_results(directory))
    except MissingRecord as exc:
        raise SystemExit(f"docs/benchmarks.md not written: {exc}") from None
    args.out.write_text(page)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
