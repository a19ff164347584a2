#!/usr/bin/env python3
"""Record real readings of every GPU on this machine with nvidia-smi, idle, under a bf16 matrix-product load,
then cooling down: the inputs of scripts/gpu-readings-through-rules.py (issue 44: real readings through the same
alerting rules as the twin's simulated exporter). Runs where the GPUs are (a lent machine); writes OUT_DIR:

  readings.csv    one row per GPU per second: time, phase and every nvidia-smi field this driver answers
  fields.json     which fields were asked, which the driver refused, the driver version and GPU names
  remapped.csv    nvidia-smi --query-remapped-rows once at the end (row-remapper counters)

  python3 scripts/gpu-readings.py OUT_DIR [--idle 15] [--load 45] [--cool 15]

The load is PyTorch's bf16 matmul (n = 8192) on every GPU; without PyTorch the run has no load phase and says so.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

# nvidia-smi --query-gpu names (nvidia-smi --help-query-gpu); each is asked alone first, kept if answered
FIELDS = ("index", "uuid", "name", "temperature.gpu", "power.draw", "power.limit", "enforced.power.limit",
          "utilization.gpu", "memory.used", "memory.free", "clocks_event_reasons.active", "clocks.sm",
          "pcie.link.gen.gpucurrent", "pcie.link.gen.max", "pcie.link.width.current", "pcie.link.width.max",
          "ecc.errors.uncorrected.volatile.total", "ecc.errors.corrected.volatile.total")


def _smi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=30)


def _answered(field: str) -> bool:
    done = _smi(f"--query-gpu={field}", "--format=csv,noheader,nounits")
    return done.returncode == 0 and "Field" not in done.stdout and "not a valid field" not in done.stderr


def _load(seconds: float, stop: threading.Event) -> str:
    try:
        import torch
    except ImportError:
        return "no PyTorch here: no load phase"
    import torch.multiprocessing  # noqa: F401  (one thread a GPU below)

    def work(device: int) -> None:
        with torch.cuda.device(device):
            a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
            end = time.monotonic() + seconds
            while time.monotonic() < end and not stop.is_set():
                for _ in range(20):
                    a @ b
                torch.cuda.synchronize()

    threads = [threading.Thread(target=work, args=(d,)) for d in range(torch.cuda.device_count())]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return f"bf16 matmul n=8192 on {len(threads)} GPU(s) for {seconds:.0f} s"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--idle", type=float, default=15)
    parser.add_argument("--load", type=float, default=45)
    parser.add_argument("--cool", type=float, default=15)
    args = parser.parse_args()
    if shutil.which("nvidia-smi") is None:
        print("no nvidia-smi here: nothing to record", file=sys.stderr)
        return 3
    args.out.mkdir(parents=True, exist_ok=True)
    fields = [f for f in FIELDS if _answered(f)]
    refused = [f for f in FIELDS if f not in fields]
    driver = _smi("--query-gpu=driver_version", "--format=csv,noheader").stdout.split("\n")[0].strip()
    load_note: list[str] = []
    stop = threading.Event()
    phases = (("idle", args.idle), ("load", args.load), ("cool", args.cool))
    start = time.time()
    with (args.out / "readings.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["time", "phase", *fields])
        for phase, seconds in phases:
            worker = None
            if phase == "load":
                worker = threading.Thread(target=lambda s=seconds: load_note.append(_load(s, stop)))
                worker.start()
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                tick = time.monotonic()
                done = _smi(f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits")
                now = time.time()
                for row in csv.reader(done.stdout.strip().splitlines()):
                    writer.writerow([f"{now:.3f}", phase, *(v.strip() for v in row)])
                handle.flush()
                time.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))
            if worker is not None:
                stop.set()
                worker.join()
    remapped = _smi("--query-remapped-rows=gpu_uuid,remapped_rows.correctable,remapped_rows.uncorrectable,"
                    "remapped_rows.pending,remapped_rows.failure", "--format=csv,nounits")
    (args.out / "remapped.csv").write_text(remapped.stdout if remapped.returncode == 0 else "")
    names = _smi("--query-gpu=name", "--format=csv,noheader").stdout.split("\n")
    (args.out / "fields.json").write_text(json.dumps({
        "asked": list(FIELDS), "answered": fields, "refused": refused, "driver": driver,
        "gpus": [n.strip() for n in names if n.strip()], "started": start, "load": load_note,
        "remapped_rows_answered": remapped.returncode == 0}, indent=2) + "\n")
    print(f"recorded {sum(s for _, s in phases):.0f} s of readings: {len(fields)} fields, refused {refused}; "
          f"{'; '.join(load_note)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
