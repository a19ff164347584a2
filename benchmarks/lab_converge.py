#!/usr/bin/env python3
"""The lab of 2 SUs (8 GPU servers): `up` with the SUs provisioned in parallel, and converge of 8 hosts vs 1.

inventory/lab.yaml with SU 2 added (4 more GPU servers, the envelope already holds them), on the lab
target with a throwaway Pulumi backend, through the CLI as a user runs it:

  up-1su    `clusterforge up` of inventory/lab.yaml as declared (1 SU): seconds, then `destroy`
  up-2su    `clusterforge up` of the 2-SU declaration: seconds, and when the engine started and
            finished each dynamic resource (HostImage, Lab, HostProvision and Verification per group),
            so the overlap of su01's and su02's provisioning shows they ran side by side
  steady    a second `up` of the 2-SU stack: seconds (nothing to create or provision)
  one/all   on that lab, every GPU server re-imaged (back to its golden image), the storage servers
            already converged: the site playbook on 1 server, then on all 8 (`--limit servers`);
            the ratio all/one is the cost of converging 8 hosts at once on this machine, printed with
            the share of both cores that was busy meanwhile (the hosts and Ansible share 2 cores here)

Every figure is printed; nothing is asserted. Needs root and the lab prerequisites; takes ~15 min warm.

    python benchmarks/lab_converge.py [--json] [--keep]
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
SRC = REPO / "src"
SECOND_SU = "  - {id: 2, server_model: hgx-h200-2gpu, nodes: 4, racks: 2}\n"
ANCHOR = "    racks: 2\n\nnetworks:"
# The engine's own lines for each dynamic resource: "<type> <name> creating (0s)" / "... created (12s)".
RESOURCE_LINE = re.compile(r"dynamic/clusterforge:(\w+) (\S+) (creating|created|updating|updated) \(")


def declarations(directory: Path) -> tuple[Path, Path]:
    """inventory/lab.yaml (1 SU) and the same with SU 2 appended, each beside a copy of the catalog."""
    shutil.copytree(REPO / "inventory" / "catalog", directory / "catalog")
    text = (REPO / "inventory" / "lab.yaml").read_text()
    if ANCHOR not in text:
        raise SystemExit("inventory/lab.yaml changed shape; update benchmarks/lab_converge.py")
    one, two = directory / "lab.yaml", directory / "lab-2su.yaml"
    one.write_text(text)
    two.write_text(text.replace(ANCHOR, "    racks: 2\n" + SECOND_SU + "\nnetworks:", 1))
    return one, two


def cpu_busy() -> tuple[int, int]:
    """(busy, total) jiffies of this machine so far (/proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def cli(state: Path, *args: str) -> tuple[float, dict[str, list[float]], str]:
    """Run the CLI; returns (seconds, {resource: [started s, finished s]}, output tail)."""
    env = {**os.environ, "CLUSTERFORGE_STATE_DIR": str(state), "CLUSTERFORGE_BACKEND_URL": f"file://{state}/pulumi",
           "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    (state / "pulumi").mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", "from clusterforge.cli import main; main()", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    groups: dict[str, list[float]] = {}
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        now = time.monotonic() - started
        tail = (tail + [line])[-40:]
        m = RESOURCE_LINE.search(line)
        if m:
            span = groups.setdefault(f"{m.group(1)} {m.group(2)}", [now, now])
            if m.group(3) in ("created", "updated"):
                span[1] = now
    rc = proc.wait()
    if rc != 0:
        raise SystemExit(f"clusterforge {' '.join(args)} exited {rc}:\n{''.join(tail)}")
    return time.monotonic() - started, groups, "".join(tail)


def converge(inventory: Path, ssh_config: Path, limit: str, work: Path) -> tuple[float, dict[str, int], float]:
    """The site playbook on ``limit``: (seconds, changed tasks per host, share of both cores busy)."""
    from clusterforge.provision import run_site

    busy0, total0 = cpu_busy()
    result = run_site(inventory, work, limit=limit, extravars={"cf_lab": True}, ssh_config=ssh_config)
    busy1, total1 = cpu_busy()
    if not result.ok:
        raise SystemExit(f"site playbook on {limit} failed: {result.failed_hosts or result.status}")
    return result.duration_s, result.changed_per_host, round((busy1 - busy0) / max(1, total1 - total0), 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true", help="leave the 2-SU lab up at the end")
    args = parser.parse_args()
    sys.path.insert(0, str(SRC))
    from clusterforge.lab import missing_prerequisites, reimage
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.loading import load_and_plan
    from clusterforge.pulumi.images import booting, lab_images
    from clusterforge.render import render_tree

    why = missing_prerequisites()
    if why:
        print("the lab cannot run here: " + ", ".join(why))
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="cf-bench-converge-"))
    one, two = declarations(tmp / "decl")
    state = tmp / "state"
    figures: dict[str, object] = {}
    up = ("--target", "lab", "--yes")
    try:
        seconds, groups, _ = cli(state, "up", str(one), "--stack", "bench1", *up)
        figures["up_1su_s"] = round(seconds, 1)
        figures["up_1su_resources"] = {g: [round(a, 1), round(b, 1)] for g, (a, b) in groups.items()}
        cli(state, "destroy", str(one), "--stack", "bench1", "--yes")

        seconds, groups, _ = cli(state, "up", str(two), "--stack", "bench2", *up)
        figures["up_2su_s"] = round(seconds, 1)
        figures["up_2su_resources"] = {g: [round(a, 1), round(b, 1)] for g, (a, b) in groups.items()}
        one_su, two_su = "HostProvision su01-provision", "HostProvision su02-provision"
        if one_su in groups and two_su in groups:
            (a1, b1), (a2, b2) = groups[one_su], groups[two_su]
            figures["su_overlap_s"] = round(max(0.0, min(b1, b2) - max(a1, a2)), 1)
        figures["steady_2su_s"] = round(cli(state, "up", str(two), "--stack", "bench2", *up)[0], 1)

        _, plan, _ = load_and_plan(two)
        tree = render_tree(plan)
        topology = booting(lab_topology(plan, tree), lab_images(plan, tree))
        servers = sorted(d.name for d in plan.devices if d.kind == "server")
        work = state / "stacks" / "bench2"
        inventory = work / "rendered" / "ansible" / "inventory.yml"
        from clusterforge.lab import ssh_config_path

        for host in servers:  # every server back to its golden image, as a new node would boot
            reimage(topology, host)
        ssh = ssh_config_path(topology.name)
        one_s, one_changed, one_busy = converge(inventory, ssh, servers[0], tmp / "runner-one")
        reimage(topology, servers[0])
        all_s, all_changed, all_busy = converge(inventory, ssh, "servers", tmp / "runner-all")
        figures.update(one_host_s=round(one_s, 1), all_hosts_s=round(all_s, 1), hosts=len(servers),
                       all_over_one=round(all_s / one_s, 2), changed_one=one_changed[servers[0]],
                       changed_all=sorted(set(all_changed.values())), cpu_busy_one=one_busy, cpu_busy_all=all_busy)
    finally:
        if not args.keep:
            try:
                cli(state, "destroy", str(two), "--stack", "bench2", "--yes")
            except SystemExit as exc:
                print(f"warning: destroy: {exc}", file=sys.stderr)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:>16}: {value}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
