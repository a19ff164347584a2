"""docs/benchmarks.md is built by benchmarks/write_page.py from the records the benchmark scripts write
(benchmarks/results.py): here from a small sample of records, figures only checked to be carried onto the page, never
timed; a missing record stops the page."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from results import ENV, read_results, recording  # noqa: E402
from write_page import MissingRecord, build_page  # noqa: E402

MACHINE = {"cpus": 2, "cpu_model": "Sample CPU 9000", "memory_gib": 23.5, "load_start": [0.5, 0.6, 0.7],
           "load_end": [3.25, 2.0, 1.0], "started": "2026-12-06 10:00 UTC", "finished": "2026-12-06 10:40 UTC",
           "commit": "0123456789ab", "dirty": False, "python": "3.11.7", "pyavd": "6.4.0"}


def _run(**params) -> dict:
    return {"kind": "run", "params": params, "argv": [], "load_start": 1.2, "load_end": 3.4, "wall_s": 61.0}


RESULTS = {
    "plan_render": [
        {"kind": "size", "sus": 8, "gpus": 2048, "devices": 544, "links": 5944, "switches": 272, "files": 579,
         "plan_s": 0.22, "render_s": 0.18, "total_s": 0.4, "cpu_s": 0.4, "workers_cpu_s": 0.0, "peak_rss_mb": 50.2,
         "own_rss_mb": 50.2},
        {"kind": "size", "sus": 512, "error": "MemoryError"},
        _run(sizes=[8, 512], transport="infiniband")],
    "render_switches": [
        {"kind": "size", "sus": 64, "max_sus": 512, "gpus": 16384, "switches": 3312, "files": 3400,
         "bytes": 357_040_000, "load_s": 0.1, "plan_s": 2.97, "render_s": 6.99, "render_cpu_s": 6.06,
         "s_per_switch": 0.0021, "tiers": 3, "storage_tiers": 3, "peak_rss_mib": 606.0},
        _run(sizes=[64], envelope_max_sus=512)],
    "scale_examples": [
        {"kind": "example", "example": "lab", "sus": 128, "chassis": True, "gpus": 1024, "devices": 2000,
         "switches": 1500, "files": 1600, "problems": [], "problem_count": 0, "tiers": {"data": 3, "storage": 3},
         "plan_s": 0.5, "check_s": 0.1, "render_s": 1.0, "cpu_s": 1.6, "peak_rss_mib": 120.0},
        {"kind": "example", "example": "superpod-4su", "sus": 512, "chassis": True, "error": "PlanError: too big"},
        _run(sizes=[128, 512], examples=["lab", "superpod-4su"], chassis=True)],
    "commands_scale": [
        {"kind": "command", "name": "plan", "label": "", "command": "plan --format json", "wall_s": 18.1,
         "cpu_s": 15.5, "tree_rss_mb": 1187.4, "tree_pss_mb": 1084.0, "max_process_mb": 710.0, "output_mb": 300.0,
         "load": 2.6, "sha256": "f65270933efb0d0b"},
        _run(sus=512, only=["plan"], src=None, against=None)],
    "pyavd_compare": [
        {"kind": "result", "ours": {"side": "clusterforge", "switches": 528, "leaves": 512, "spines": 16, "tiers": 2,
                                    "host_ports": 16, "uplinks": 16, "seconds": 2.63, "plan_s": 2.04, "cpu_s": 1.02,
                                    "bytes": 11_744_051},
         "avd": {"side": "pyavd", "version": "6.4.0", "switches": 528, "leaves": 512, "spines": 16, "seconds": 786.27,
                 "facts_s": 258.23, "cpu_s": 149.57, "bytes": 6_081_740},
         "ours_ms_per_switch": 4.98, "avd_ms_per_switch": 1489.15, "ratio_wall": 298.7, "ratio_cpu": 147.2},
        _run(sus=64, rounds=2)],
    "pyavd_process": [
        {"kind": "size", "sus": 8, "data_switches": 66, "all_switches": 90, "ours_wall_s": 0.52, "ours_cpu_s": 0.49,
         "switches_only_cpu_s": 0.44, "avd_wall_s": 14.48, "avd_cpu_s": 9.95, "old_wall_s": None, "old_cpu_s": None,
         "old_identical": None},
        {"kind": "size", "sus": 64, "data_switches": 528, "all_switches": 752, "ours_wall_s": 6.52, "ours_cpu_s": 2.09,
         "switches_only_cpu_s": 1.33, "avd_wall_s": 349.52, "avd_cpu_s": 182.93, "old_wall_s": None,
         "old_cpu_s": None, "old_identical": None},
        {"kind": "marginal", "from_switches": 66, "to_switches": 528, "ours_ms": 3.46, "switches_only_ms": 1.93,
         "old_ms": None, "avd_ms": 374.41, "ratio": 0.0092, "ratio_switches_only": 0.0051},
        _run(sus=[8, 64], rounds=2, avd=True, old_src=None)],
    "cli_startup": [
        {"kind": "command", "command": "--version", "note": "", "wall_min": 0.017, "wall_median": 0.018,
         "cpu_min": 0.016, "cpu_median": 0.017, "exit_statuses": [0]},
        {"kind": "command", "command": "validate inventory/lab.yaml", "note": "no bytecode", "wall_min": 0.228,
         "wall_median": 0.23, "cpu_min": 0.227, "cpu_median": 0.229, "exit_statuses": [0]},
        _run(rounds=15, src=None)],
}


def test_the_page_carries_the_machine_and_every_figure_of_the_run():
    page = build_page(MACHINE, RESULTS)
    assert page.startswith("# Benchmarks\n")
    assert "2 × Sample CPU 9000" in page and "23.5 GiB" in page and "`0123456789ab`" in page
    assert "0.50 / 0.60 / 0.70 at the start, 3.25 / 2.00 / 1.00 at the end" in page
    assert "2026-12-06 10:00 UTC to 2026-12-06 10:40 UTC" in page
    assert "| 8 | 2,048 | 544 | 5,944 | 272 | 579 | 0.22 | 0.18 | 0.40 | 0.40 | 0.00 | 50 | 50 |" in page
    assert "| 512 | failed: MemoryError |" in page
    assert "| 64 | 3,312 | 340.5 | 2.97 | 6.99 | 6.06 | 2.1 | 606 MiB |" in page
    assert "1 of 2 plan, pass the fabric checks and render" in page and "superpod-4su at 512 SUs" in page
    assert "## Commands at 512 SUs" in page
    assert "| `plan --format json` | 18.1 | 15.5 | 1,187 | 1,084 | 710 | 300.0 | f65270933efb0d0b |" in page
    assert "per-switch ratio (pyavd / clusterforge): 298.7x wall, 147.2x cpu" in page
    assert "best of 2 rounds interleaved" in page
    assert "| 64 | 528 | 752 | 6.52 | 2.09 | 3.96 | 1.33 | 2.52 | 349.52 | 182.93 | 346.46 | 0.0114 | 0.0073 |" in page
    assert "66 → 528: clusterforge 3.46 ms (`--switches-only` 1.93 ms), pyavd 374.41 ms; ratio 0.0092" in page
    assert "| `validate inventory/lab.yaml`, no bytecode | 0.228 s | 0.230 s | 0.227 s | 0.229 s |" in page
    assert "load 1.2 → 3.4, 61 s in all" in page
    assert "[measurements.md](measurements.md)" in page


@pytest.mark.parametrize("bench", sorted(RESULTS))
def test_a_script_without_results_stops_the_page(bench):
    results = {name: records for name, records in RESULTS.items() if name != bench}
    with pytest.raises(MissingRecord, match=bench):
        build_page(MACHINE, results)


@pytest.mark.parametrize("bench", sorted(RESULTS))
def test_a_script_that_did_not_finish_stops_the_page(bench):
    results = copy.deepcopy(RESULTS)
    results[bench] = [r for r in results[bench] if r["kind"] != "run"]
    with pytest.raises(MissingRecord, match="`run`"):
        build_page(MACHINE, results)


def test_a_section_without_figures_stops_the_page():
    results = copy.deepcopy(RESULTS)
    results["commands_scale"] = [r for r in results["commands_scale"] if r["kind"] == "run"]
    with pytest.raises(MissingRecord, match="commands_scale: no `command` record"):
        build_page(MACHINE, results)


def test_machine_facts_are_required():
    machine = {k: v for k, v in MACHINE.items() if k != "load_end"}
    with pytest.raises(MissingRecord, match="load_end"):
        build_page(machine, RESULTS)


def test_a_script_writes_its_records_and_a_run_record_only_where_the_environment_names_a_directory(
        tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    with recording("sample", sizes=[1]) as rec:
        rec.record("size", sus=1)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv(ENV, str(tmp_path / "results"))
    for _ in range(2):  # a second run starts the file afresh
        with recording("sample", sizes=[1]) as rec:
            rec.record("size", sus=1, plan_s=0.5)
    (records,) = read_results(tmp_path / "results").values()
    assert [r["kind"] for r in records] == ["size", "run"]
    assert records[0] == {"kind": "size", "sus": 1, "plan_s": 0.5}
    assert records[1]["params"] == {"sizes": [1]}
    with pytest.raises(RuntimeError), recording("failed") as rec:
        rec.record("size", sus=1)
        raise RuntimeError("a script that fails half-way")
    assert [r["kind"] for r in read_results(tmp_path / "results")["failed"]] == ["size"]
