#!/usr/bin/env python3
"""The lab's Kubernetes layer, timed: the control plane on ctl-01 (playbooks/kubernetes.yml), every GPU node
Ready (simulated kubelets: kwok), and the second run of the playbook (nothing to change).

It boots the lab of inventory/lab.yaml in its own lab home (like the tests), runs the playbook twice with a
throwaway CA and prints: the first run (binaries copied, units started, /readyz, nodes registered,
k8s_gpu applied), how long after it every node reported Ready, the API server's /readyz after a restart
of kube-apiserver, and the second run. The lab is taken down at the end. Needs root and the binaries
of scripts/setup-k8s.sh (whose cold build time it prints when its log is given: --build-log FILE).
Run it under `flock /work/lab.lock` on a shared machine. Prints, never asserts.

    python benchmarks/k8s_control_plane.py [--build-log FILE]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-log", type=Path, help="scripts/setup-k8s.sh's output of a cold build")
    args = parser.parse_args()
    import os

    os.environ.setdefault("CLUSTERFORGE_LAB_HOME", str(ROOT / ".lab-bench"))
    from kubernetes import client, config

    from clusterforge.lab import down, up
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.loading import load_and_plan
    from clusterforge.provision import run_site
    from clusterforge.pulumi.kube.binaries import kubernetes_bin_dir
    from clusterforge.pulumi.kube.component import SERVICE_IP
    from clusterforge.pulumi.kube.kubeconfig import admin_kubeconfig
    from clusterforge.pulumi.kube.pki import make_bundle
    from clusterforge.render import render_all, render_tree, write_tree

    if args.build_log and args.build_log.is_file():
        built = re.search(r"built in (\d+)s", args.build_log.read_text())
        print(f"cold build (scripts/setup-k8s.sh, from its log): {built.group(1) if built else '?'} s")
    bin_dir = kubernetes_bin_dir()
    _, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    control = next(d for d in plan.devices if d.kind == "control")
    gpu_nodes = [d.name for d in plan.devices if d.kind == "server" and d.gpus]
    topology = lab_topology(plan, render_tree(plan))
    with tempfile.TemporaryDirectory(prefix="cf-bench-k8s-") as tmp:
        rendered = Path(tmp) / "rendered"
        write_tree(rendered, render_all(plan))
        down(topology.name)
        try:
            started = time.monotonic()
            lab = up(topology)
            print(f"lab up (bare rootfs, {len(topology.hosts)} hosts): {time.monotonic() - started:.0f} s")
            bundle = make_bundle(plan.cluster, [control.management_ip], SERVICE_IP)
            extravars = {"cf_lab": True, "cf_k8s_bin_dir": str(bin_dir),
                         "cf_k8s_kwok_stages": str(bin_dir.parent / "kwok-stages"), "cf_k8s_pki": bundle}

            def run():
                return run_site(rendered / "ansible" / "inventory.yml", Path(tmp) / "runner", limit="control_nodes",
                                extravars=extravars, ssh_config=lab.ssh_config, playbook="kubernetes.yml")

            first = run()
            print(f"control plane + GPU layer, first run: {first.duration_s:.0f} s (ok={first.ok})")
            if not first.ok:
                print(f"failed: {first.failed_hosts or first.unreachable_messages or first.status}"
                      f" ({first.artifact_dir})")
                return 1
            path = Path(tmp) / "kubeconfig"
            path.write_text(admin_kubeconfig(plan.cluster, control.management_ip, bundle))
            core = client.CoreV1Api(config.new_client_from_config(str(path)))
            t0 = time.monotonic()
            while time.monotonic() - t0 < 120:
                ready = [n.metadata.name for n in core.list_node().items
                         if any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])]
                if set(gpu_nodes) <= set(ready):
                    break
                time.sleep(0.5)
            print(f"all {len(gpu_nodes)} GPU nodes Ready (simulated kubelets): {time.monotonic() - t0:.1f} s"
                  " after the first run")
            ssh = ["ssh", "-F", str(lab.ssh_config), "-o", "BatchMode=yes", control.name]
            t0 = time.monotonic()
            # the restart returns once the old process has drained its in-flight requests and the new one started
            subprocess.run([*ssh, "systemctl restart kube-apiserver"], check=True, capture_output=True)
            restarted = time.monotonic() - t0
            api = core.api_client
            url = api.configuration.host.rstrip("/") + "/readyz"
            last = "no answer"
            while time.monotonic() - t0 < 240:
                try:  # the client's own TLS pool (the admin certificate), not the generated API (no /readyz there)
                    answer = api.rest_client.pool_manager.request("GET", url, timeout=2.0, retries=False)
                    if answer.status == 200 and answer.data == b"ok":
                        last = ""
                        break
                    last = f"HTTP {answer.status}"
                except Exception as exc:  # noqa: BLE001 - not up yet
                    last = type(exc).__name__
                time.sleep(0.2)
            state = "ready" if not last else f"NOT ready ({last})"
            print(f"kube-apiserver {state} {time.monotonic() - t0:.1f} s after `systemctl restart` began"
                  f" (the restart itself returned after {restarted:.1f} s)")
            second = run()
            print(f"second run: {second.duration_s:.0f} s, changed {second.changed_per_host}")
        finally:
            down(topology.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
