#!/usr/bin/env python3
"""Real GPU readings (scripts/gpu-readings.py, recorded on a machine with GPUs) through clusterforge's GPU
alerting rules in a real Prometheus: issue 44's "real readings pass through the same rules once".

  python3 scripts/gpu-readings-through-rules.py RECORD_DIR

Each nvidia-smi field becomes the dcgm-exporter series the rules read (the same NVML quantities DCGM reports:
temperature, power and its limit, utilisation, frame buffer used/free, the clock-event (throttle) bitmask,
uncorrected volatile ECC errors, remapped rows); the series are backfilled into a TSDB with
`promtool tsdb create-blocks-from openmetrics`, a real Prometheus (Debian's) serves them, and every expression
of the rendered `gpu` rule group is evaluated over the recorded window with /api/v1/query_range. Reported per
rule: the seconds its condition held, the longest run against its `for`, and so whether the alert would have
fired. Series nvidia-smi cannot give (Xid events come from the kernel log, NVLink counters need NVLink,
PCIe replays are not a --query-gpu field) are listed as not fed, never as passing.
Writes RECORD_DIR/rules.json and RECORD_DIR/rules.md.
"""

from __future__ import annotations

import csv
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from clusterforge.render.monitoring.rules import gpu_rules, rules_document  # noqa: E402

# nvidia-smi --query-gpu field -> dcgm-exporter series (DCGM field names, as roles/dcgm_exporter collects them)
SERIES = {
    "temperature.gpu": "DCGM_FI_DEV_GPU_TEMP",
    "power.draw": "DCGM_FI_DEV_POWER_USAGE",
    "enforced.power.limit": "DCGM_FI_DEV_POWER_MGMT_LIMIT",
    "utilization.gpu": "DCGM_FI_DEV_GPU_UTIL",
    "memory.used": "DCGM_FI_DEV_FB_USED",
    "memory.free": "DCGM_FI_DEV_FB_FREE",
    "clocks_event_reasons.active": "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
    "clocks.sm": "DCGM_FI_DEV_SM_CLOCK",
    "ecc.errors.uncorrected.volatile.total": "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
}
REMAPPED = {"remapped_rows.uncorrectable": "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
            "remapped_rows.failure": "DCGM_FI_DEV_ROW_REMAP_FAILURE"}
NOT_FED = {
    "DCGM_FI_DEV_XID_ERRORS": "Xid events come from the kernel log / DCGM, not nvidia-smi --query-gpu",
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": "not a --query-gpu field",
    "DCGM_FI_DEV_NVLINK_*_COUNT_TOTAL": "a one-GPU machine has no NVLink",
}


def _number(text: str) -> float | None:
    text = text.strip()
    if not text or text.startswith("[") or text in ("N/A", "Not Supported"):
        return None
    if text in ("Yes", "No"):  # remapped_rows.failure / .pending
        return 1.0 if text == "Yes" else 0.0
    return float(int(text, 16)) if text.lower().startswith("0x") else float(text)


def _openmetrics(record: Path) -> tuple[str, float, float, dict[str, dict[str, float]]]:
    rows = list(csv.DictReader((record / "readings.csv").open()))
    samples: dict[str, list[str]] = {}
    seen: dict[str, dict[str, float]] = {}
    for row in rows:
        labels = f'gpu="{row["index"]}",host="lent-gpu",modelName="{row["name"]}"'
        for field, series in SERIES.items():
            value = _number(row.get(field, ""))
            if value is None:
                continue
            samples.setdefault(series, []).append(f"{series}{{{labels}}} {value} {row['time']}")
            stats = seen.setdefault(series, {"min": value, "max": value})
            stats["min"], stats["max"] = min(stats["min"], value), max(stats["max"], value)
    times = [float(r["time"]) for r in rows]
    remapped = record / "remapped.csv"
    if remapped.exists() and remapped.read_text().strip():
        counters = list(csv.DictReader(line.replace(", ", ",") for line in remapped.read_text().splitlines()))
        for index, counter in enumerate(counters):
            for field, series in REMAPPED.items():
                value = _number(counter.get(field, ""))
                if value is None:
                    continue
                labels = f'gpu="{index}",host="lent-gpu",modelName="{rows[0]["name"]}"'
                # the counters read once at the end hold for the whole window (they only grow)
                samples.setdefault(series, []).extend(f"{series}{{{labels}}} {value} {t:.3f}" for t in times[::5])
                seen[series] = {"min": value, "max": value}
    text = "".join(f"# TYPE {name} gauge\n" + "\n".join(lines) + "\n" for name, lines in samples.items())
    return text + "# EOF\n", min(times), max(times), seen


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def _longest_run(values: list[tuple[float, str]], step: float) -> tuple[float, float]:
    held = longest = run = 0.0
    last = None
    for stamp, _ in values:
        held += step
        run = run + step if last is not None and stamp - last <= step * 1.5 else step
        longest = max(longest, run)
        last = stamp
    return held, longest


def main() -> int:
    record = Path(sys.argv[1])
    promtool, prometheus = shutil.which("promtool"), shutil.which("prometheus")
    if not (promtool and prometheus):
        print("promtool and prometheus are needed (Debian: prometheus)", file=sys.stderr)
        return 3
    text, start, end, seen = _openmetrics(record)
    group = gpu_rules()
    with tempfile.TemporaryDirectory(prefix="cf-gpu-rules-") as tmp:
        work = Path(tmp)
        rules_file = work / "gpu.rules.yml"
        rules_file.write_text(json.dumps(rules_document(group)))
        subprocess.run([promtool, "check", "rules", str(rules_file)], check=True, capture_output=True)
        (work / "series.om").write_text(text)
        subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(work / "series.om"),
                        str(work / "data")], check=True, capture_output=True)
        (work / "prometheus.yml").write_text("global: {evaluation_interval: 1m}\n")
        port = _free_port()
        server = subprocess.Popen([prometheus, f"--config.file={work / 'prometheus.yml'}",
                                   f"--storage.tsdb.path={work / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                                   "--storage.tsdb.retention.time=3650d"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}/api/v1"
        try:
            for _ in range(300):
                try:
                    _get(f"{base}/status/buildinfo")
                    break
                except OSError:
                    time.sleep(0.2)
            version = _get(f"{base}/status/buildinfo")["data"]["version"]
            step = 1.0
            results = []
            for rule in group.rules:
                query = urllib.parse.urlencode({"query": rule.expr, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                                "step": f"{step:.0f}s"})
                answer = _get(f"{base}/query_range?{query}")["data"]["result"]
                wanted = [name for name in (*SERIES.values(), *REMAPPED.values()) if name in rule.expr]
                not_fed = [name for name in NOT_FED if name.split("*")[0] in rule.expr]
                not_fed += [name for name in wanted if name not in seen]  # the driver answered N/A throughout
                held, longest = (0.0, 0.0)
                for series in answer:
                    h, long_run = _longest_run([(float(t), v) for t, v in series["values"]], step)
                    held, longest = max(held, h), max(longest, long_run)
                fires = bool(answer) and longest >= rule.for_s
                results.append({"alert": rule.name, "for_s": rule.for_s, "condition_held_s": held,
                                "longest_run_s": longest, "would_fire": fires,
                                "fed": bool(wanted) and not not_fed, "not_fed": not_fed})
        finally:
            server.terminate()
            server.wait(timeout=30)
    fields = json.loads((record / "fields.json").read_text())
    document = {"window_s": round(end - start, 1), "prometheus": version, "gpus": fields.get("gpus"),
                "driver": fields.get("driver"), "load": fields.get("load"), "readings": seen, "rules": results,
                "not_fed": NOT_FED}
    (record / "rules.json").write_text(json.dumps(document, indent=2) + "\n")
    lines = [f"# Real GPU readings through the `gpu` rule group ({', '.join(fields.get('gpus') or [])})", "",
             f"Recorded window {end - start:.0f} s ({'; '.join(fields.get('load') or ['no load'])}); driver "
             f"{fields.get('driver')}; evaluated by Prometheus {version} over backfilled series "
             "(`scripts/gpu-readings-through-rules.py`).", "",
             "| series | min | max |", "|---|---|---|"]
    lines += [f"| {name} | {v['min']:g} | {v['max']:g} |" for name, v in sorted(seen.items())]
    lines += ["", "| alert | for | condition held | longest run | would fire | fed |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['alert']} | {r['for_s']} s | {r['condition_held_s']:.0f} s | {r['longest_run_s']:.0f} s | "
              f"{'yes' if r['would_fire'] else 'no'} | "
              f"{'yes' if r['fed'] else 'NOT FED: ' + ', '.join(r['not_fed']) or 'no series'} |" for r in results]
    lines += ["", "Not fed (no nvidia-smi source): " + "; ".join(f"{k}: {v}" for k, v in NOT_FED.items()), ""]
    (record / "rules.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
