"""Acceptance floors from measured runs: floor = lowest measured figure x (1 - margin). Pure, except ``main``.

The catalog's ``gpu.acceptance`` floors of a measured model are this derivation applied to the runs it
names (``source_runs``, report.json files under docs/acceptance/); ``tests/unit/test_gpu_floors.py``
recomputes them from those files, so a floor cannot drift from its evidence or be typed by hand.

``python -m clusterforge.verify.gpu.floors --margin 0.05 docs/acceptance/RUN/report.json ...`` prints the
lowest figures, their spread and the floors, as JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from clusterforge.verify.gpu.spec import PRECISIONS

__all__ = ["measured_figures", "lowest", "spread", "floor_value", "derive_floors", "main"]

TFLOPS_STEP = 0.1  # floors are rounded down to these steps
TBPS_STEP = 0.01


def _require_ok(where: str, r: Mapping) -> None:
    if "error" in r:
        raise ValueError(f"{where}: the run recorded an error ({r['error']}); no floor from a broken run")
    if not r.get("numerics_ok", True) or not r.get("copy_ok", True):
        raise ValueError(f"{where}: wrong results in the run; no floor from it")


def measured_figures(measurements: Mapping[str, Any]) -> dict[str, dict[str, list[float]]]:
    """Every figure one report measured, per GPU: ``burst_tflops`` and ``sustained_tflops`` (the mean
    over the sustained windows) by precision, ``memory_bandwidth_tbps`` under key ``copy``."""
    out: dict[str, dict[str, list[float]]] = {"burst_tflops": {}, "sustained_tflops": {},
                                              "memory_bandwidth_tbps": {}}
    mm = measurements.get("matmul") or {}
    for gpu, by_p in sorted((mm.get("burst") or {}).items()):
        for p, r in by_p.items():
            _require_ok(f"burst gpu{gpu} {p}", r)
            out["burst_tflops"].setdefault(p, []).append(float(r["tflops"]))
    for p, run in (mm.get("sustained") or {}).items():
        for gpu, r in sorted((run.get("per_gpu") or {}).items()):
            _require_ok(f"sustained gpu{gpu} {p}", r)
            out["sustained_tflops"].setdefault(p, []).append(float(r["mean_tflops"]))
    for gpu, r in sorted((measurements.get("membw") or {}).items()):
        _require_ok(f"membw gpu{gpu}", r)
        out["memory_bandwidth_tbps"].setdefault("copy", []).append(float(r["tbps"]))
    return out


def _merge(reports: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, list[float]]]:
    merged: dict[str, dict[str, list[float]]] = {"burst_tflops": {}, "sustained_tflops": {},
                                                 "memory_bandwidth_tbps": {}}
    for rep in reports:
        for kind, by_key in measured_figures(rep).items():
            for key, values in by_key.items():
                merged[kind].setdefault(key, []).extend(values)
    return merged


def lowest(reports: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The lowest figure of every GPU of every report (``measurements`` mappings), in the catalog's
    ``acceptance`` shape: ``{burst_tflops: {p: x}, sustained_tflops: {p: x}, memory_bandwidth_tbps: x}``."""
    merged = _merge(reports)
    copy = merged["memory_bandwidth_tbps"].get("copy")
    return {
        "burst_tflops": {p: min(v) for p, v in merged["burst_tflops"].items() if p in PRECISIONS},
        "sustained_tflops": {p: min(v) for p, v in merged["sustained_tflops"].items() if p in PRECISIONS},
        "memory_bandwidth_tbps": min(copy) if copy else None,
    }


def spread(reports: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """(max - min) / max of each figure over the reports and GPUs, and how many values it covers."""
    merged = _merge(reports)

    def _s(v: list[float]) -> dict[str, Any]:
        return {"n": len(v), "min": min(v), "max": max(v), "spread": round((max(v) - min(v)) / max(v), 4)}

    return {kind: {k: _s(v) for k, v in by_key.items()} for kind, by_key in merged.items()}


def floor_value(measured: float, margin: float, step: float) -> float:
    """``measured x (1 - margin)`` rounded down to ``step``. Pure."""
    if not 0 <= margin < 1:
        raise ValueError(f"margin must be in [0, 1), got {margin}")
    if measured <= 0:
        raise ValueError(f"measured figure must be > 0, got {measured}")
    units = math.floor(measured * (1 - margin) / step + 1e-9)
    return round(units * step, 6)


def derive_floors(low: Mapping[str, Any], margin: float) -> dict[str, Any]:
    """The catalog floors for lowest figures ``low`` (``lowest``'s shape) at ``margin``. Pure."""
    out: dict[str, Any] = {
        "burst_tflops": {p: floor_value(v, margin, TFLOPS_STEP) for p, v in (low.get("burst_tflops") or {}).items()
                         if v is not None},
        "sustained_tflops": {p: floor_value(v, margin, TFLOPS_STEP)
                             for p, v in (low.get("sustained_tflops") or {}).items() if v is not None},
        "memory_bandwidth_tbps": None,
    }
    if low.get("memory_bandwidth_tbps") is not None:
        out["memory_bandwidth_tbps"] = floor_value(float(low["memory_bandwidth_tbps"]), margin, TBPS_STEP)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m clusterforge.verify.gpu.floors", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--margin", type=float, required=True, help="fraction under the lowest measured figure")
    p.add_argument("reports", nargs="+", help="report.json files of acceptance runs")
    a = p.parse_args(argv)
    reports = []
    for path in a.reports:
        with open(path) as f:
            reports.append(json.load(f)["measurements"])
    low = lowest(reports)
    json.dump({"margin": a.margin, "source_runs": a.reports, "lowest": low, "spread": spread(reports),
               "floors": derive_floors(low, a.margin)}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
