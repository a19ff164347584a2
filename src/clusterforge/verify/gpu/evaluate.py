"""Measurements + spec -> checks and findings. Pure: no I/O, no GPU, no clock.

A check is ``{name, measured, expected, unit, passed, detail}``; ``expected`` is the
threshold the measurement is compared with (``None`` where the spec sets no gate and the
check only asserts that the step ran and its numbers are right). A finding is
``{kind, severity, message, ...data}``: something an operator should read (throttling and
its cause, burst/sustained gap, fidelity of our all-reduce against nccl-tests, poor
scaling), which does not by itself fail acceptance unless a check says so.

Measurements shape (what ``runner`` records; every part may be missing or carry ``error``)::

    host:      {gpu_count, gpus: [{index, name, ...}], ...}
    matmul:    {burst: {"<gpu>": {"<precision>": {tflops, numerics_ok, rel_err, ...}}},
                sustained: {"<precision>": {per_gpu: {"<gpu>": {best_tflops, mean_tflops,
                            min_tflops, windows, numerics_ok, telemetry: {summary, static}}}}}}
    membw:     {"<gpu>": {tbps, copy_ok, bytes}}
    allreduce: {world_size, smoke: {ok, ranks}, sweep: [{bytes, busbw_gbps, correct}],
                baseline: {source, measured_here, busbw_gbps: {bytes: gbps}} | None}
    scaling:   {efficiency: {weak: {"N": e}, strong: {"N": e}}, runs: [...]}
    errors:    {"<step>": "message"}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterforge.verify.gpu import metrics, nccltests
from clusterforge.verify.gpu.spec import PRECISIONS, AcceptanceSpec
from clusterforge.verify.gpu_names import gpu_model_matches


def check(name: str, measured: Any, expected: Any, unit: str, passed: bool, detail: str = "") -> dict:
    return {
        "name": name,
        "measured": measured,
        "expected": expected,
        "unit": unit,
        "passed": bool(passed),
        "detail": detail,
    }


def _gpu_sort(keys) -> list[str]:
    return sorted(keys, key=lambda k: (len(str(k)), str(k)))


def _host_checks(m: Mapping, spec: AcceptanceSpec) -> list[dict]:
    host = m.get("host") or {}
    out = []
    if "gpu_count" in host:
        out.append(
            check(
                "gpu.count",
                host["gpu_count"],
                spec.gpu_count,
                "GPUs",
                host["gpu_count"] == spec.gpu_count,
                "GPUs visible to CUDA on this node vs declared gpu.count",
            )
        )
    names = [g.get("name", "") for g in host.get("gpus", [])]
    if names:
        ok = all(gpu_model_matches(spec.gpu_model, n) for n in names)
        out.append(
            check(
                "gpu.model",
                sorted(set(names)),
                spec.gpu_model,
                "",
                ok,
                "every GPU's reported name must be the declared model's exactly (verify.gpu_names: an H100 NVL"
                " or PCIe is not an H100 SXM5)",
            )
        )
    return out


def watts(text: Any) -> float | None:
    """A power figure as nvidia-smi prints it (``700.00``, ``700.00 W``) or NVML gives it (a number);
    None for ``[N/A]``, ``[Not Supported]``, empty or missing. Pure."""
    if isinstance(text, bool) or text is None:
        return None
    if isinstance(text, int | float):
        return float(text)
    value = str(text).strip().removesuffix("W").strip()
    try:
        return float(value)
    except ValueError:
        return None


def enforced_power_limit(row: Mapping, nvml_limit_w: Any = None) -> tuple[float | None, str]:
    """(watts, where it was read) for one GPU: nvidia-smi's ``enforced.power.limit`` (what the power
    management applies), else its ``power.limit`` (the software limit; reports from before the enforced
    field was queried), else NVML's enforced limit from the telemetry. Pure."""
    for key in ("enforced.power.limit", "power.limit"):
        w = watts(row.get(key))
        if w is not None:
            return w, f"nvidia-smi {key}"
    w = watts(nvml_limit_w)
    return (w, "NVML enforced power limit") if w is not None else (None, "not reported")


def power_limit_verdict(enforced_w: float | None, declared_w: float | None, tolerance_w: float = 1.0) -> tuple[
        bool, str]:
    """Is a GPU's enforced power limit the catalog's? (passed, why). Pure.

    A card capped below the catalog's limit fails: the floors were measured at the catalog's limit and
    a capped card sustains less (Hopper's sustained matmul is power-bound). A limit that cannot be read
    fails as not measured; no declared limit is "not gated", reported as passed only with that said."""
    if declared_w is None:
        return True, "not gated: the catalog declares no power limit for this model"
    if enforced_w is None:
        return False, f"NOT MEASURED: no power limit could be read (catalog {declared_w:g} W)"
    if enforced_w < declared_w - tolerance_w:
        return False, (f"CAPPED: enforced {enforced_w:g} W is {1 - enforced_w / declared_w:.1%} under the catalog's"
                       f" {declared_w:g} W; the floors assume {declared_w:g} W")
    if enforced_w > declared_w + tolerance_w:
        return True, f"enforced {enforced_w:g} W is above the catalog's {declared_w:g} W (finding)"
    return True, f"enforced {enforced_w:g} W = the catalog's {declared_w:g} W"


def _nvml_limits(m: Mapping) -> dict[str, Any]:
    """GPU index -> NVML enforced power limit, from any sustained run's telemetry."""
    out: dict[str, Any] = {}
    for run in ((m.get("matmul") or {}).get("sustained") or {}).values():
        for gpu, r in (run.get("per_gpu") or {}).items():
            limit = ((r.get("telemetry") or {}).get("static") or {}).get("power_limit_w")
            if limit is not None:
                out.setdefault(str(gpu), limit)
    return out


def _power_checks(m: Mapping, spec: AcceptanceSpec) -> list[dict]:
    """One check per GPU the host probe saw: its enforced power limit against the catalog's."""
    host = m.get("host") or {}
    gpus = host.get("gpus") or []
    if not gpus:
        return []
    rows = {str(r.get("index")): r for r in host.get("nvidia_smi") or []}
    nvml = _nvml_limits(m)
    out: list[dict] = []
    for g in gpus:
        idx = str(g.get("index", len(out)))
        limit, source = enforced_power_limit(rows.get(idx, {}), nvml.get(idx))
        passed, why = power_limit_verdict(limit, spec.power_limit_w, spec.thresholds.power_limit_tolerance_w)
        row = rows.get(idx, {})
        extra = ", ".join(f"{k} {row[k]}" for k in ("power.limit", "power.default_limit", "power.max_limit")
                          if row.get(k) not in (None, ""))
        out.append(check(f"gpu.power_limit[gpu{idx}]", limit, spec.power_limit_w, "W", passed,
                         f"{why} (read from {source}{'; ' + extra if extra else ''})"))
    return out


def _power_findings(checks: list[dict]) -> list[dict]:
    return [{"kind": "power_limit", "severity": "warning" if not c["passed"] else "info", "check": c["name"],
             "enforced_w": c["measured"], "catalog_w": c["expected"], "message": f"{c['name']}: {c['detail']}"}
            for c in checks if c["name"].startswith("gpu.power_limit") and
            (not c["passed"] or "above the catalog" in c["detail"])]


def _matmul_checks(m: Mapping, spec: AcceptanceSpec) -> list[dict]:
    out = []
    th = spec.thresholds
    burst = (m.get("matmul") or {}).get("burst") or {}
    for gpu in _gpu_sort(burst):
        for p in PRECISIONS:
            r = burst[gpu].get(p)
            if r is None:
                continue
            declared = spec.tflops_dense.get(p)
            floor = th.burst_floor_tflops.get(p)
            frac = th.matmul_fraction_for(p)
            need: float | None = round(floor if floor is not None else frac * declared, 2)
            name = f"matmul.{p}.burst[gpu{gpu}]"
            if "error" in r:
                out.append(check(name, None, need, "TFLOPS", False, f"error: {r['error']}"))
                continue
            fast = r["tflops"] >= need
            ok_num = bool(r.get("numerics_ok", True))
            gate = f"catalog floor {floor:g} TFLOPS" if floor is not None else f"{frac:.0%} of declared"
            detail = (f">= {gate} (declared dense {declared:g} TFLOPS; {r['tflops'] / declared:.1%} reached,"
                      f" {r['tflops'] / need - 1:+.1%} over the gate)")
            if not ok_num:
                detail += f"; WRONG RESULT: relative error {r.get('rel_err')} > {r.get('rel_err_limit')}"
            out.append(check(name, r["tflops"], need, "TFLOPS", fast and ok_num, detail))
    sustained = (m.get("matmul") or {}).get("sustained") or {}
    for p in PRECISIONS:
        run = sustained.get(p)
        if not run:
            continue
        for gpu in _gpu_sort(run.get("per_gpu", {})):
            r = run["per_gpu"][gpu]
            name = f"matmul.{p}.sustained[gpu{gpu}]"
            fraction = th.sustained_matmul_fraction
            floor = th.sustained_floor_tflops.get(p)
            peak = spec.tflops_dense.get(p)
            need = round(floor, 2) if floor is not None else \
                round(fraction * peak, 2) if fraction and peak is not None else None
            if "error" in r:
                out.append(check(name, None, need, "TFLOPS", False, f"error: {r['error']}"))
                continue
            ok_num = bool(r.get("numerics_ok", True))
            passed = ok_num and (need is None or r["mean_tflops"] >= need)
            detail = (
                f"mean of {len(r.get('windows', []))} windows over {run.get('duration_s')} s, "
                f"{run.get('concurrent_gpus', 1)} GPU(s) loaded at once; "
                f"best {r['best_tflops']}, min {r['min_tflops']}"
            )
            if floor is not None:
                detail += f"; gate >= catalog floor {floor:g} TFLOPS ({r['mean_tflops'] / floor - 1:+.1%})"
            else:
                detail += f"; gate >= {fraction:.0%} of declared" if fraction else "; not gated (findings only)"
            if not ok_num:
                detail += f"; WRONG RESULT: relative error {r.get('rel_err')}"
            out.append(check(name, r["mean_tflops"], need, "TFLOPS", passed, detail))
    return out


def _membw_checks(m: Mapping, spec: AcceptanceSpec) -> list[dict]:
    out = []
    floor = spec.thresholds.membw_floor_tbps
    membw = m.get("membw") or {}
    for gpu in _gpu_sort(membw):
        r = membw[gpu]
        name = f"membw.copy[gpu{gpu}]"
        if "error" in r:
            out.append(check(name, None, floor, "TB/s", False, f"error: {r['error']}"))
            continue
        ok = bool(r.get("copy_ok", True)) and (floor is None or r["tbps"] >= floor)
        detail = f"device-to-device copy of {metrics.human_size(r.get('bytes', 0))}, read + write counted"
        detail += "" if floor is not None else "; not gated (no membw_floor_tbps)"
        if not r.get("copy_ok", True):
            detail += "; COPY MISMATCH"
        out.append(check(name, r["tbps"], floor, "TB/s", ok, detail))
    return out


def _allreduce_checks(m: Mapping, spec: AcceptanceSpec) -> list[dict]:
    ar = m.get("allreduce")
    if not ar:
        return []
    out = []
    if "error" in ar:
        return [check("allreduce.smoke", None, None, "", False, f"error: {ar['error']}")]
    world = int(ar.get("world_size", 0))
    smoke = ar.get("smoke") or {}
    values = sorted({r.get("value") for r in smoke.get("ranks", [])})
    out.append(
        check(
            "allreduce.smoke",
            values,
            world,
            "sum of ones",
            bool(smoke.get("ok")),
            f"all_reduce of ones over {world} rank(s): every rank must see {world}",
        )
    )
    sweep = ar.get("sweep") or []
    if sweep:
        bad = [metrics.human_size(r["bytes"]) for r in sweep if not r.get("correct", True)]
        out.append(
            check(
                "allreduce.sweep_correct",
                len(sweep) - len(bad),
                len(sweep),
                "sizes",
                not bad,
                "after each timed loop, all_reduce of ones must give n everywhere"
                + (f"; wrong at {bad}" if bad else ""),
            )
        )
        largest = max(sweep, key=lambda r: r["bytes"])
        floor = spec.thresholds.busbw_floor_gbps
        ok = floor is None or largest["busbw_gbps"] >= floor
        out.append(
            check(
                f"allreduce.busbw[{metrics.human_size(largest['bytes'])}]",
                largest["busbw_gbps"],
                floor,
                "GB/s",
                ok,
                f"bus bandwidth at the largest message over {world} GPUs ({ar.get('dtype')})"
                + ("" if floor is not None else "; not gated (no busbw_floor_gbps)"),
            )
        )
    return out


def _scaling_checks(m: Mapping, spec: AcceptanceSpec) -> list[dict]:
    sc = m.get("scaling")
    if not sc:
        return []
    if "error" in sc:
        return [check("scaling", None, spec.thresholds.scaling_efficiency_floor, "", False, f"error: {sc['error']}")]
    out = []
    floor = spec.thresholds.scaling_efficiency_floor
    eff = sc.get("efficiency") or {}
    for mode, label in (("weak", "fixed per-GPU batch"), ("strong", "fixed global batch")):
        for n, e in sorted((eff.get(mode) or {}).items(), key=lambda kv: int(kv[0])):
            if int(n) == 1:
                continue
            out.append(check(f"scaling.{mode}[{n}]", e, floor, "efficiency", e >= floor, f"{label}, 1 -> {n} GPUs"))
    for r in sc.get("runs", []):
        for phase, ph in (r.get("phases") or {}).items():
            if not ph.get("loss_finite", True):
                out.append(
                    check(
                        f"scaling.{phase}.loss[{r['world_size']}]",
                        ph.get("loss"),
                        "finite",
                        "",
                        False,
                        "training loss became NaN/inf",
                    )
                )
    return out


def _error_checks(m: Mapping) -> list[dict]:
    return [check(f"step.{k}", None, None, "", False, f"step failed: {v}") for k, v in (m.get("errors") or {}).items()]


def _telemetry_findings(m: Mapping, spec: AcceptanceSpec) -> list[dict]:
    out = []
    th = spec.thresholds
    mm = m.get("matmul") or {}
    burst = mm.get("burst") or {}
    for p, run in (mm.get("sustained") or {}).items():
        for gpu, r in (run.get("per_gpu") or {}).items():
            tele = (r.get("telemetry") or {}).get("summary")
            static = (r.get("telemetry") or {}).get("static") or {}
            reasons = (tele or {}).get("reasons") or {}
            base = {"gpu": gpu, "precision": p}
            if tele:
                sm, pw, tc = tele.get("sm_mhz") or {}, tele.get("power_w") or {}, tele.get("temp_c") or {}
                seen = (
                    f"SM clock {sm.get('min')}-{sm.get('max')} MHz, power up to {pw.get('max')} W"
                    f" of a {static.get('power_limit_w')} W limit, {tc.get('min')}-{tc.get('max')} C"
                )
                if reasons.get("throttling"):
                    frac = reasons.get("fractions", {})
                    parts = ", ".join(f"{n} in {frac.get(n, 0):.0%} of samples" for n in reasons["throttling"])
                    share = max(frac.get(n, 0) for n in reasons["throttling"])
                    counters = (r.get("telemetry") or {}).get("clock_event_counters_us") or {}
                    busy = {k: v for k, v in counters.items() if v}
                    if busy:
                        seen += "; driver counters during the run: " + ", ".join(
                            f"{k.removesuffix('_us')} {v / 1e6:.1f} s" for k, v in sorted(busy.items())
                        )
                    out.append(
                        {
                            "kind": "throttling",
                            "severity": "warning" if share >= th.throttle_finding_share else "info",
                            "share": round(share, 4),
                            **base,
                            "causes": reasons.get("causes", []),
                            "reasons": reasons["throttling"],
                            "mask_union": reasons.get("mask_union_hex"),
                            "message": f"gpu{gpu} {p} sustained: clocks held down by {parts} "
                            f"(cause: {', '.join(reasons.get('causes', []))}); {seen}",
                        }
                    )
                if tc.get("max") is not None and tc["max"] > th.temperature_finding_c:
                    out.append(
                        {
                            "kind": "temperature",
                            "severity": "warning",
                            **base,
                            "max_c": tc["max"],
                            "message": f"gpu{gpu} {p}: {tc['max']} C exceeds {th.temperature_finding_c} C",
                        }
                    )
            elif r.get("telemetry", {}).get("error"):
                out.append(
                    {
                        "kind": "telemetry_missing",
                        "severity": "info",
                        **base,
                        "message": f"no NVML telemetry: {r['telemetry']['error']}",
                    }
                )
            b = (burst.get(gpu) or {}).get(p) or {}
            if "mean_tflops" in r and b.get("tflops"):
                gap = 1 - r["mean_tflops"] / b["tflops"]
                if gap > th.sustained_gap_finding:
                    cause = ", ".join(reasons.get("causes", [])) or "no NVML throttle reason reported"
                    out.append(
                        {
                            "kind": "sustained_gap",
                            "severity": "warning",
                            **base,
                            "burst_tflops": b["tflops"],
                            "sustained_mean_tflops": r["mean_tflops"],
                            "gap": round(gap, 4),
                            "causes": reasons.get("causes", []),
                            "message": f"gpu{gpu} {p}: sustained mean {r['mean_tflops']} TFLOPS is "
                            f"{gap:.1%} below burst {b['tflops']} "
                            f"(threshold {th.sustained_gap_finding:.0%}); cause: {cause}",
                        }
                    )
    return out


def _fidelity_findings(m: Mapping, spec: AcceptanceSpec) -> list[dict]:
    ar = m.get("allreduce") or {}
    sweep = ar.get("sweep") or []
    if not sweep:
        if ar and not ar.get("error") and int(ar.get("world_size", 0)) == 1:
            return [
                {
                    "kind": "allreduce_single_gpu",
                    "severity": "info",
                    "message": "one GPU: all-reduce smoke test only, no bus bandwidth to measure",
                }
            ]
        return []
    base = ar.get("baseline")
    if not base:
        return [
            {
                "kind": "fidelity",
                "severity": "info",
                "baseline": None,
                "message": "no nccl-tests run and no reference figures for this machine: fidelity not assessed",
            }
        ]
    rows = nccltests.fidelity(sweep, base.get("busbw_gbps", {}))
    counted = [r for r in rows if r["counted"]]
    tol = spec.thresholds.fidelity_tolerance
    within = bool(counted) and all(abs(r["ratio"] - 1) <= tol for r in counted)
    ratios = ", ".join(f"{metrics.human_size(r['bytes'])} {r['ratio']:.3f}" for r in rows)
    kind_of = "nccl-tests run here" if base.get("measured_here") else "recorded reference figures (not run here)"
    return [
        {
            "kind": "fidelity",
            "severity": "info" if within else "warning",
            "baseline_source": base.get("source"),
            "measured_here": bool(base.get("measured_here")),
            "rows": rows,
            "tolerance": tol,
            "within_tolerance_at_1GiB_plus": within,
            "message": f"torch.distributed busbw / nccl-tests busbw ({kind_of}): {ratios}; "
            f"{'within' if within else 'NOT within'} {tol:.0%} at >= 1 GiB",
        }
    ]


def _scaling_findings(m: Mapping, spec: AcceptanceSpec) -> list[dict]:
    eff = ((m.get("scaling") or {}).get("efficiency")) or {}
    out = []
    floor = spec.thresholds.scaling_efficiency_floor
    for mode in ("weak", "strong"):
        for n, e in (eff.get(mode) or {}).items():
            if int(n) > 1 and e < floor:
                out.append(
                    {
                        "kind": "scaling",
                        "severity": "warning",
                        "mode": mode,
                        "gpus": int(n),
                        "efficiency": e,
                        "message": f"{mode} scaling efficiency {e:.1%} at {n} GPUs is below {floor:.0%}: "
                        "check data loading, topology (nvidia-smi topo -m), NCCL settings, sync",
                    }
                )
    return out


def evaluate(measurements: Mapping[str, Any], spec: AcceptanceSpec) -> dict:
    """All checks and findings; ``passed`` is True only if there is at least one check and all pass."""
    checks = (
        _error_checks(measurements)
        + _host_checks(measurements, spec)
        + _power_checks(measurements, spec)
        + _matmul_checks(measurements, spec)
        + _membw_checks(measurements, spec)
        + _allreduce_checks(measurements, spec)
        + _scaling_checks(measurements, spec)
    )
    findings = (
        _power_findings(checks)
        + _telemetry_findings(measurements, spec)
        + _fidelity_findings(measurements, spec)
        + _scaling_findings(measurements, spec)
    )
    failed = [c["name"] for c in checks if not c["passed"]]
    return {
        "passed": bool(checks) and not failed,
        "checks": checks,
        "failed": failed,
        "findings": findings,
    }
