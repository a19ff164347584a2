"""Acceptance report: JSON (everything) and Markdown (for people). Writes are atomic."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from clusterforge.verify.gpu import metrics, nccltests
from clusterforge.verify.gpu.spec import PRECISIONS


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write to a temporary file in the same directory, fsync, then os.replace onto ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a report is for reading
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 10 else f"{v:.1f}"
    if isinstance(v, list):
        return ", ".join(_fmt(x) for x in v)
    return str(v)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(c).replace("|", "/") for c in r) + " |" for r in rows]
    return lines + [""]


def _matmul_section(m: dict) -> list[str]:
    """Burst and sustained matmul per GPU and precision, with NVML telemetry."""
    lines: list[str] = []
    mm = m.get("matmul") or {}
    burst, sus = mm.get("burst") or {}, mm.get("sustained") or {}
    if burst or sus:
        lines += ["## Matmul (TFLOPS, n = 8192)", ""]
        rows = []
        for gpu in sorted(burst or {"0": {}}, key=int):
            for p in PRECISIONS:
                b = (burst.get(gpu) or {}).get(p) or {}
                s = ((sus.get(p) or {}).get("per_gpu") or {}).get(gpu) or {}
                if not b and not s:
                    continue
                gap = None
                if b.get("tflops") and s.get("mean_tflops"):
                    gap = f"{1 - s['mean_tflops'] / b['tflops']:.1%}"
                rows.append(
                    [
                        gpu,
                        p,
                        b.get("tflops"),
                        s.get("best_tflops"),
                        s.get("mean_tflops"),
                        s.get("min_tflops"),
                        gap,
                        ", ".join(f"{w['tflops']:.0f}" for w in s.get("windows", [])),
                    ]
                )
        lines += _table(
            ["gpu", "precision", "burst (10 iters)", "sustained best", "mean", "min", "gap", "per window"],
            rows,
        )
        trows = []
        for p in PRECISIONS:
            for gpu, s in sorted(((sus.get(p) or {}).get("per_gpu") or {}).items(), key=lambda kv: int(kv[0])):
                t = s.get("telemetry") or {}
                su, st = t.get("summary") or {}, t.get("static") or {}
                if not su:
                    continue
                r = su.get("reasons") or {}
                pw = su.get("power_w") or {}
                trows.append(
                    [
                        gpu,
                        p,
                        f"{(su.get('sm_mhz') or {}).get('min')}-{(su.get('sm_mhz') or {}).get('max')}",
                        f"{(su.get('mem_mhz') or {}).get('min')}-{(su.get('mem_mhz') or {}).get('max')}",
                        f"{pw.get('mean')} / {pw.get('max')} of {st.get('power_limit_w')}",
                        f"{(su.get('temp_c') or {}).get('min')}-{(su.get('temp_c') or {}).get('max')}",
                        r.get("mask_union_hex"),
                        ", ".join(f"{k} {v:.0%}" for k, v in sorted((r.get("fractions") or {}).items())),
                    ]
                )
        if trows:
            lines += ["### Telemetry during the sustained runs (NVML)", ""]
            lines += _table(
                [
                    "gpu",
                    "precision",
                    "SM MHz",
                    "mem MHz",
                    "power W mean / max of limit",
                    "temp C",
                    "reasons (OR)",
                    "reason share of samples",
                ],
                trows,
            )
    return lines


def _membw_section(m: dict) -> list[str]:
    """Copy bandwidth per GPU."""
    lines: list[str] = []
    membw = m.get("membw") or {}
    if membw:
        lines += ["## Memory bandwidth", ""]
        lines += _table(
            ["gpu", "buffer", "TB/s (median)", "TB/s (best)", "copy ok"],
            [
                [
                    g,
                    metrics.human_size(r.get("bytes", 0)),
                    r.get("tbps"),
                    r.get("best_tbps"),
                    r.get("copy_ok"),
                ]
                for g, r in sorted(membw.items(), key=lambda kv: int(kv[0]))
                if "error" not in r
            ],
        )
    return lines


def _allreduce_section(m: dict) -> list[str]:
    """The all-reduce sweep against the reference figures."""
    lines: list[str] = []
    ar = m.get("allreduce") or {}
    if ar.get("sweep"):
        base = ar.get("baseline") or {}
        fid = {r["bytes"]: r for r in nccltests.fidelity(ar["sweep"], base.get("busbw_gbps", {}))}
        lines += [
            f"## All-reduce ({ar.get('world_size')} GPUs, {ar.get('dtype')}, {ar.get('iters')} iters)",
            "",
        ]
        if base:
            lines += [f"Baseline: {base.get('source')}", ""]
        lines += _table(
            ["size", "time us", "algbw GB/s", "busbw GB/s", "baseline busbw", "ours / baseline", "correct"],
            [
                [
                    metrics.human_size(r["bytes"]),
                    r.get("time_us"),
                    r.get("algbw_gbps"),
                    r.get("busbw_gbps"),
                    (fid.get(r["bytes"]) or {}).get("baseline_gbps"),
                    (fid.get(r["bytes"]) or {}).get("ratio"),
                    r.get("correct"),
                ]
                for r in ar["sweep"]
            ],
        )
    return lines


def _scaling_section(m: dict) -> list[str]:
    """DDP scaling: weak and strong efficiency per world size."""
    lines: list[str] = []
    sc = m.get("scaling") or {}
    if sc.get("runs"):
        lines += [
            "## Scaling (DDP MLP training step)",
            "",
            f"- weak: {sc.get('weak')}",
            f"- strong: {sc.get('strong')}",
            "",
        ]
        eff = sc.get("efficiency") or {}
        rows = []
        for r in sc["runs"]:
            n = str(r["world_size"])
            ph = r.get("phases") or {}
            rows.append(
                [
                    n,
                    (ph.get("weak") or {}).get("tokens_per_s"),
                    (eff.get("weak") or {}).get(n),
                    (ph.get("strong") or {}).get("step_s"),
                    (eff.get("strong") or {}).get(n),
                ]
            )
        lines += _table(["GPUs", "weak tokens/s", "weak eff.", "strong step s", "strong eff."], rows)
        first = sc["runs"][0]
        lines += [
            f"Model: {first.get('layers')} blocks, d_model {first.get('d_model')}, "
            f"{first.get('params') or 0:,} "
            f"parameters; {sc.get('tokens_per_gpu')} tokens per GPU (weak).",
            "",
        ]
    return lines


def render_markdown(report: dict) -> str:
    ev = report.get("evaluation", {})
    m = report.get("measurements", {})
    host = m.get("host", {})
    spec = report.get("spec", {})
    verdict = "PASSED" if ev.get("passed") else "FAILED"
    lines = [f"# GPU acceptance: {verdict}", ""]
    gpu_names = ", ".join(sorted({g.get("name", "?") for g in host.get("gpus", [])}))
    versions = f"driver {host.get('driver')}, CUDA {host.get('cuda')}, torch {host.get('torch')}"
    n_checks, n_failed = len(ev.get("checks", [])), len(ev.get("failed", []))
    lines += [
        f"- host: `{host.get('hostname')}`; GPUs: {host.get('gpu_count')} x {gpu_names}",
        f"- {versions}, NCCL {host.get('nccl')}",
        f"- declared: {spec.get('gpu_count')} x {spec.get('gpu_model')}, dense TFLOPS {spec.get('tflops_dense')}",
        f"- started {report.get('started')}, finished {report.get('finished')}",
        f"- options: `{json.dumps(report.get('options', {}))}`",
        "",
        f"{n_checks} checks, {n_failed} failed, {len(ev.get('findings', []))} findings.",
        "",
        "## Checks",
        "",
    ]
    lines += _table(
        ["check", "measured", "expected", "unit", "result", "detail"],
        [
            [
                c["name"],
                c["measured"],
                c["expected"],
                c["unit"],
                "pass" if c["passed"] else "**FAIL**",
                c["detail"],
            ]
            for c in ev.get("checks", [])
        ],
    )
    lines += ["## Findings", ""]
    lines += [f"- **{f['kind']}** ({f['severity']}): {f['message']}" for f in ev.get("findings", [])] or ["- none"]
    lines.append("")

    for section in (_matmul_section, _membw_section, _allreduce_section, _scaling_section):
        lines += section(m)
    errs = m.get("errors") or {}
    if errs:
        lines += ["## Step errors", ""] + [f"- `{k}`: {v}" for k, v in errs.items()] + [""]
    return "\n".join(lines)


def write_report(report: dict, out_dir: str | os.PathLike) -> dict[str, Path]:
    out = Path(out_dir)
    paths = {
        "json": atomic_write_text(
            out / "report.json", json.dumps(report, indent=2, sort_keys=False, default=str) + "\n"
        ),
        "markdown": atomic_write_text(out / "report.md", render_markdown(report)),
    }
    return paths
