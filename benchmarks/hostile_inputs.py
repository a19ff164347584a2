"""Cost of the worst declarations: `clusterforge validate` time and peak RSS per hostile input.

Each case runs in its own process (peak RSS is that case's alone), through the real CLI entry point,
with inventory/catalog beside it. Usage: python benchmarks/hostile_inputs.py [CASE...]
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAB = (ROOT / "inventory" / "lab.yaml").read_text()
MIB = 1024 * 1024
CAP = 256 * 1024  # model.yamlsafe.MAX_BYTES, spelled out so a changed limit shows in this table's sizes


def _catalog_entries(count: int) -> str:
    entry = ("    m{i:05d}: {{vendor: v, gpu: {{model: H200, count: 8, memory_gb: 141, tflops_dense: {{fp16: 1,"
             " bf16: 1, fp32: 1, tf32: 1}}}}, nics: {{data: {{count: 8, speed_gbps: 400}}}},"
             " psu: {{count: 6, rating_w: 3300}}, max_draw_w: 10200, height_u: 8, weight_kg: 130, price: 1}}\n")
    return "".join(entry.format(i=i) for i in range(count))


CASES = {
    "baseline: inventory/lab.yaml": lambda: LAB.encode(),
    "256 KiB of comments (valid lab)": lambda: (LAB + "#" * (CAP - len(LAB) - 200) + "\n").encode(),
    "256 KiB one scalar": lambda: LAB.replace("owner: platform-team",
                                              "owner: " + "a" * (CAP - len(LAB) - 100), 1).encode(),
    "256 KiB flat mapping (node cap)": lambda: "".join(f"k{i:07d}: 1\n" for i in range(CAP // 12)).encode(),
    "256 KiB flow sequence (node cap)": lambda: ("x: [" + "1," * (CAP // 2 - 10) + "1]\n").encode(),
    "256 KiB of '[' (depth)": lambda: ("x: " + "[" * (CAP - 10) + "\n").encode(),
    "catalog of 400 server models (valid, ~18k nodes)": lambda: (LAB.replace("catalog: {}", "catalog:\n  servers:\n"
                                                                            + _catalog_entries(400))).encode(),
    "alias bomb (9^9)": lambda: ("a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))).encode(),
    "10 MiB file (sparse)": None,  # sparse, written below
    "named pipe": None,
}


def one(name: str) -> dict:
    from clusterforge.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        shutil.copytree(ROOT / "inventory" / "catalog", directory / "catalog")
        path = directory / "case.yaml"
        if name == "10 MiB file (sparse)":
            with path.open("wb") as handle:
                handle.truncate(10 * MIB)
        elif name == "named pipe":
            os.mkfifo(path)
        else:
            path.write_bytes(CASES[name]())
        size = path.stat().st_size
        sys.argv = ["clusterforge", "validate", str(path)]
        saved = os.dup(2)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        start, cpu = time.perf_counter(), time.process_time()
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            os.dup2(saved, 2)
    return {"case": name, "bytes": size, "exit": code, "seconds": round(elapsed, 2), "cpu_s": round(cpu, 2),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        sys.stdout = sys.__stdout__
        print(json.dumps(one(sys.argv[2])))
        return
    names = sys.argv[1:] or list(CASES)
    print("| case | bytes | exit | wall s | CPU s | peak RSS MiB |\n|---|---:|---:|---:|---:|---:|")
    for name in names:
        result = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True,
                                timeout=600)
        row = json.loads(result.stdout.strip().splitlines()[-1])
        print(f"| {row['case']} | {row['bytes']:,} | {row['exit']} | {row['seconds']} | {row['cpu_s']} |"
              f" {row['peak_rss_mib']} |",
              flush=True)


if __name__ == "__main__":
    main()
