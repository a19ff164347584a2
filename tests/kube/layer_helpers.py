"""What the tests of tests/kube share: the lab declaration's Kubernetes vars, GPU nodes as API objects (no kubelet
here, as kwok's in the lab), and the k8s_gpu role applied for real to the loopback API server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import kubernetes
from kubernetes.client import CoreV1Api
from kubernetes.client.rest import ApiException

REPO_ROOT = Path(__file__).resolve().parents[2]
FOREIGN_LABEL = ("example.com/rack-owner", "ops")
FOREIGN_TAINT = {"key": "example.com/maintenance", "value": "planned", "effect": "PreferNoSchedule"}
APPLY_PLAYBOOK = """
- name: Apply the GPU layer to the loopback API server.
  hosts: localhost
  connection: local
  gather_facts: false
  roles:
    - k8s_gpu
"""


def lab_kube_vars() -> dict:
    from clusterforge.loading import load_and_plan
    from clusterforge.render.ansible_inventory import kubernetes_vars

    _, plan, _ = load_and_plan(REPO_ROOT / "inventory" / "lab.yaml")
    return kubernetes_vars(plan)


def apply_layer(loopback, work: Path, kube_vars: dict, time_slicing: int = 1) -> None:
    """playbooks/kubernetes.yml's k8s_gpu play, pointed at the loopback server."""
    (work / "apply.yml").write_text(APPLY_PLAYBOOK)
    (work / "vars.json").write_text(json.dumps({
        "k8s_gpu_kubeconfig": str(loopback.kubeconfig_path), "k8s_gpu_kubectl": str(loopback.bin_dir / "kubectl"),
        "k8s_gpu_manifest_dir": str(work / "manifests"), "k8s_gpu_teams": kube_vars["teams"],
        "k8s_gpu_nodes": kube_vars["gpu_nodes"], "k8s_gpu_time_slicing_replicas": time_slicing,
        "ansible_python_interpreter": sys.executable}))
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO_ROOT / "playbooks" / "ansible.cfg"),
           "ANSIBLE_ROLES_PATH": str(REPO_ROOT / "roles"), "ANSIBLE_LOCAL_TEMP": str(work / "ansible-tmp"),
           "ANSIBLE_HOME": str(work / "ansible-home")}
    played = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,",
                             str(work / "apply.yml"), "-e", f"@{work / 'vars.json'}"],
                            env=env, capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stdout[-4000:] + played.stderr[-2000:]


def gone(read, *args) -> bool:
    try:
        read(*args)
    except ApiException as exc:
        return exc.status == 404
    return False



def ensure_nodes(api, kube_vars: dict) -> None:
    """Each planned GPU node as a Node object with a label and a taint of someone else's (kept if it exists)."""
    core = CoreV1Api(api)
    for node in kube_vars["gpu_nodes"]:
        try:
            core.create_node(kubernetes.client.V1Node(
                metadata=kubernetes.client.V1ObjectMeta(name=node["name"], labels=dict([FOREIGN_LABEL])),
                spec=kubernetes.client.V1NodeSpec(taints=[kubernetes.client.V1Taint(**FOREIGN_TAINT)])))
        except ApiException as exc:
            if exc.status != 409:
                raise
