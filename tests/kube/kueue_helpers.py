"""What the Kueue tests of tests/kube share: Kueue's upstream CRDs applied to a loopback API server, the real
kueue binary of the build cache (scripts/setup-k8s.sh) started against it with roles/k8s_kueue's configuration,
GPU nodes as API objects, and jobs submitted the way the role documents (suspended, with a queue-name label).

Kueue reads its metrics certificate from a fixed path, /etc/kueue/metrics/certs, when its internal certificate
management is off (cmd/kueue/main.go). The test process writes nothing under the machine's /etc: kueue runs in a
private mount namespace (``unshare --mount``) whose /etc is an overlay with the certificate in its upper
directory, under the test's temporary directory. No network namespace is made."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
ROLE = REPO_ROOT / "roles" / "k8s_kueue"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
READY_TIMEOUT_S = 120.0


def kubectl(api, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([str(api.bin_dir / "kubectl"), "--kubeconfig", str(api.kubeconfig_path), *args],
                          input=stdin, capture_output=True, text=True, timeout=120)
    if check:
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


def apply_crds(api, kueue_dir: Path) -> None:
    """Kueue's own CRDs, as roles/k8s_kueue applies them (server-side), then established."""
    kubectl(api, "apply", "--server-side", "--force-conflicts", "--field-manager", "clusterforge",
            "-f", str(kueue_dir / "crds"))
    kubectl(api, "wait", "--for=condition=Established", "--timeout=60s", "-f", str(kueue_dir / "crds"))


def role_config(work: Path, ports: dict[str, int], role_vars: dict[str, Any] | None = None) -> Path:
    """roles/k8s_kueue's configuration template rendered with the role's defaults and ``role_vars`` (what
    playbooks/kubernetes.yml passes from the plan), on loopback ports."""
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    values = defaults | (role_vars or {}) | {"k8s_kueue_conf_dir": str(work / "conf"),
                         "k8s_kueue_health_address": f"127.0.0.1:{ports['health']}",
                         "k8s_kueue_webhook_port": ports["webhook"],
                         "k8s_kueue_metrics_address": f"127.0.0.1:{ports['metrics']}"}
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters["to_json"] = json.dumps
    text = env.from_string((ROLE / "templates" / "kueue-config.yaml.j2").read_text()).render(**values)
    path = work / "conf" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def role_webhooks(work: Path, ports: dict[str, int]) -> str:
    """roles/k8s_kueue's webhook configurations rendered with the role's defaults, the loopback webhook port and
    the serving certificate start_kueue made (as the role's slurp returns it: base64)."""
    import base64

    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    cert = base64.b64encode((work / "conf" / "webhook" / "certs" / "tls.crt").read_bytes()).decode()
    values = defaults | {"k8s_kueue_webhook_port": ports["webhook"], "k8s_kueue_cert": {"content": cert}}
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters["to_json"] = json.dumps
    env.filters["combine"] = lambda a, b: {**a, **b}
    return env.from_string((ROLE / "templates" / "kueue-webhooks.yaml.j2").read_text()).render(**values)


def _serving_cert(directory: Path) -> None:
    """The role's own openssl command: a self-signed certificate for 127.0.0.1."""
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=kueue",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(directory / "tls.key"),
                    "-out", str(directory / "tls.crt")], check=True, capture_output=True, timeout=60)


@dataclass
class RunningKueue:
    proc: subprocess.Popen
    log: Path

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]


def start_kueue(api, kueue_dir: Path, work: Path, ports: dict[str, int],
                role_vars: dict[str, Any] | None = None) -> RunningKueue:
    config = role_config(work, ports, role_vars)
    _serving_cert(work / "conf" / "webhook" / "certs")
    upper = work / "etc-upper"
    (upper / "kueue" / "metrics").mkdir(parents=True)
    shutil.copytree(work / "conf" / "webhook" / "certs", upper / "kueue" / "metrics" / "certs")
    (work / "etc-work").mkdir()
    script = (f"mount -t overlay overlay -o lowerdir=/etc,upperdir={upper},workdir={work / 'etc-work'} /etc"
              f' && exec "$0" --config={config} --kubeconfig={api.kubeconfig_path} --zap-log-level=2')
    log = work / "kueue.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                                 str(kueue_dir / "bin" / "kueue")], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env={**os.environ})
    running = RunningKueue(proc, log)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"kueue exited ({proc.returncode}):\n{running.tail()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ports['health']}/readyz", timeout=2) as answer:
                if answer.status == 200:
                    return running
        except OSError:
            pass
        time.sleep(0.5)
    running.stop()
    raise RuntimeError(f"kueue was not ready in {READY_TIMEOUT_S} s:\n{running.tail()}")


def gpu_node(name: str, labels: dict[str, str], gpus: int) -> dict[str, Any]:
    """A GPU node as the lab's kubelet registers it and roles/k8s_gpu labels and taints it."""
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}}


def node_status(gpus: int) -> dict[str, Any]:
    capacity = {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"status": {"capacity": capacity, "allocatable": capacity,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "a node object of the test", "lastHeartbeatTime": now,
                                       "lastTransitionTime": now}]}}


def gpu_job(name: str, team: str, gpus: int, topology_level: str | None = None) -> dict[str, Any]:
    """`gpus` pods of one GPU each, submitted suspended to the team's LocalQueue."""
    template: dict[str, Any] = {"spec": {"restartPolicy": "Never", "containers": [
        {"name": "work", "image": "registry.invalid/clusterforge/cf-gpu-probe:1",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
    if topology_level:
        template["metadata"] = {"annotations": {REQUIRED_TOPOLOGY: topology_level}}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": team, "labels": {QUEUE_LABEL: team}},
            "spec": {"suspend": True, "parallelism": gpus, "completions": gpus, "template": template}}
