#!/usr/bin/env python3
"""Time to a verified twin: `make up` (set-up, then `clusterforge up` of the lab), warm or fresh.

  warm    in this checkout, after `make down`: the engine, venv, rootfs, apt cache and golden images
          are there; what is left is the lab, the converge from the image and the host checks
  fresh   in a clean clone under a temporary directory with empty caches of its own: Go module and
          build caches, the machine-wide caches of the built Kubernetes binaries and Pulumi engine, pip
          without its cache, the clone's own lab home (rootfs, apt cache, images).
          Debian packages already installed on this machine stay installed (a new machine adds their
          download: ~1 min), and the Debian mirror is as close as it is here
  second  then a second `clusterforge up` of the same stack (nothing to create; the checks run again)

Each line of output is stamped as it arrives; the figures are when the set-up finished, the golden
image was ready, the lab was up, each group was provisioned and verified, the Slurm and Kubernetes steps
were done, and the total, with the 1-minute load average at the start and the end. Every run
ends with `make down`. Needs root; prints, never asserts.

    python benchmarks/make_up.py [--fresh] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# (figure, pattern of the line that ends it); the first match counts.
MARKS = (
    ("engine_ready_s", re.compile(r"setup-pulumi: (ready|using pulumi)")),
    ("images_ready_s", re.compile(r"^image gpu-\S+ \((built|cached)")),
    ("setup_s", re.compile(r"^setup: ready")),
    ("lab_up_s", re.compile(r"dynamic/clusterforge:Lab \S+ created")),
    ("storage_provisioned_s", re.compile(r"HostProvision storage-provision created")),
    ("su01_provisioned_s", re.compile(r"HostProvision su01-provision created")),
    ("su01_verified_s", re.compile(r"Verification su01-verify created")),
    ("slurm_controller_s", re.compile(r"HostProvision slurm-controller created")),
    ("kubernetes_s", re.compile(r"HostProvision kubernetes-control-plane created")),
    ("slurm_nodes_s", re.compile(r"HostProvision slurm-nodes created")),
)


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, dict[str, float], list[str]]:
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    marks: dict[str, float] = {}
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        now = round(time.monotonic() - started, 1)
        tail = (tail + [line])[-60:]
        for name, pattern in MARKS:
            if name not in marks and pattern.search(line.strip()):
                marks[name] = now
    rc = proc.wait()
    if rc != 0:
        raise SystemExit(f"{' '.join(argv)} exited {rc}:\n{''.join(tail)}")
    return round(time.monotonic() - started, 1), marks, tail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="a clean clone with empty caches")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERFORGE_", "VIRTUAL_ENV", "PULUMI_"))}
    env["PATH"] = ":".join(p for p in env.get("PATH", "").split(":") if "/tools/bin" not in p and "/.venv/" not in p)
    tmp = None
    checkout = REPO
    if args.fresh:
        tmp = Path(tempfile.mkdtemp(prefix="cf-fresh-"))
        checkout = tmp / "clusterforge"
        subprocess.run(["git", "clone", "-q", str(REPO), str(checkout)], check=True)
        env.update(GOCACHE=str(tmp / "go-build"), GOMODCACHE=str(tmp / "go-mod"), PIP_NO_CACHE_DIR="1",
                   # the machine-wide caches of the built binaries (scripts/setup-k8s.sh, setup-pulumi.sh)
                   CLUSTERFORGE_K8S_CACHE=str(tmp / "k8s-cache"), CLUSTERFORGE_PULUMI_CACHE=str(tmp / "pulumi-cache"))
    figures: dict[str, object] = {"kind": "fresh" if args.fresh else "warm", "checkout": str(checkout)}
    try:
        subprocess.run(["make", "-s", "down"], cwd=checkout, env=env, capture_output=True)
        figures["load_at_start"] = os.getloadavg()[0]
        total, marks, tail = timed(["make", "up"], checkout, env)
        figures.update(marks, make_up_s=total, load_at_end=os.getloadavg()[0])
        figures["resources"] = next((ln.strip() for ln in tail if "updated:" in ln and "to create" in ln), "")
        figures["checks"] = [ln.strip() for ln in tail if ln.startswith("verify ")]
        second, _, tail = timed(["bash", "-c", ". scripts/env.sh && clusterforge up inventory/lab.yaml --stack lab"
                                 " --yes"], checkout, env)
        figures["second_up_s"] = second
        figures["second_up"] = next((ln.strip() for ln in tail if "updated:" in ln and "to create" in ln), "")
    finally:
        subprocess.run(["make", "-s", "down"], cwd=checkout, env=env, capture_output=True)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:>22}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
