"""roles/k8s_gpu when GPU nodes change API (k8s_gpu_node_modes), run for real (ansible-playbook, local connection,
kubectl apply) against a real kube-apiserver on loopback: the objects of an API no node uses any more are deleted,
and only those carrying the role's mark; the DRA mark follows each node's API; the device plugin DaemonSet keeps off
DRA nodes. Two Node objects stand in for kubelets (no kubelet runs: nothing is advertised or allocated here; the lab
test tests/lab_cluster/test_gpu_mode_switch.py switches a real node)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kubernetes")
from kueue_helpers import gpu_node, kubectl  # noqa: E402
from layer_helpers import REPO_ROOT  # noqa: E402

NODES = ("ms-gpu01", "ms-gpu02")
TEAM = "ms-team"
MARK = "app.kubernetes.io/managed-by"
DRA_MARK = "clusterforge.io/gpu-api"
FOREIGN_CLASS = "foreign-gpus.example.com"
PLAYBOOK = """
- name: The GPU layer.
  hosts: localhost
  connection: local
  gather_facts: false
  roles:
    - k8s_gpu
"""


def _classes() -> list[dict]:
    from clusterforge.loading import load_and_plan
    from clusterforge.render.ansible_inventory import kubernetes_vars

    return kubernetes_vars(load_and_plan(REPO_ROOT / "inventory" / "lab.yaml")[1])["gpu_device_classes"]


def _run(api, work: Path, modes: dict[str, str]) -> str:
    work.mkdir(parents=True, exist_ok=True)
    (work / "play.yml").write_text(PLAYBOOK)
    (work / "vars.json").write_text(json.dumps({
        "k8s_gpu_node_modes": modes, "k8s_gpu_manifest_dir": str(work / "manifests"),
        "k8s_gpu_kubeconfig": str(api.kubeconfig_path), "k8s_gpu_kubectl": str(api.bin_dir / "kubectl"),
        "k8s_gpu_nodes": [{"name": n, "gpu_model": "H200", "gpu_count": 2} for n in NODES],
        "k8s_gpu_teams": [{"name": TEAM, "gpus": 4}], "k8s_gpu_dra_device_classes": _classes(),
        "ansible_python_interpreter": sys.executable}))
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO_ROOT / "playbooks" / "ansible.cfg"),
           "ANSIBLE_ROLES_PATH": str(REPO_ROOT / "roles"), "ANSIBLE_LOCAL_TEMP": str(work / "ansible-tmp"),
           "ANSIBLE_HOME": str(work / "ansible-home"), "ANSIBLE_NOCOLOR": "1"}
    played = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,",
                             str(work / "play.yml"), "-e", f"@{work / 'vars.json'}"],
                            env=env, capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stdout[-4000:] + played.stderr[-2000:]
    return played.stdout


def _names(api, kind: str, *args: str) -> set[str]:
    listed = json.loads(kubectl(api, "get", kind, "-o", "json", *args).stdout)["items"]
    return {i["metadata"]["name"] for i in listed}


def _dra_marked(api) -> set[str]:
    return {n for n in NODES if json.loads(kubectl(api, "get", "node", n, "-o", "json").stdout)["metadata"]["labels"]
            .get(DRA_MARK) == "dra"}


@pytest.fixture
def cluster(loopback_api):
    for name in NODES:
        kubectl(loopback_api, "apply", "-f", "-", stdin=json.dumps(gpu_node(name, {}, 2)))
    foreign = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": FOREIGN_CLASS},
               "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
    kubectl(loopback_api, "apply", "-f", "-", stdin=json.dumps(foreign))
    yield loopback_api
    kubectl(loopback_api, "delete", "--ignore-not-found", "node", *NODES)
    kubectl(loopback_api, "delete", "--ignore-not-found", "namespace", TEAM, "--wait=false")
    kubectl(loopback_api, "delete", "--ignore-not-found", "deviceclass", FOREIGN_CLASS,
            *[c["name"] for c in _classes()])
    kubectl(loopback_api, "delete", "--ignore-not-found", "-n", "kube-system", "daemonset",
            "nvidia-device-plugin-daemonset")


def test_the_objects_of_an_api_no_node_uses_are_deleted_and_only_the_roles(cluster, tmp_path):
    api, classes = cluster, {c["name"] for c in _classes()}
    claim_templates = {f"{c['short_name']}-{s}" for c in _classes() for s in ("1", "node")}

    # one node on each API: both APIs' objects; the DaemonSet keeps off the DRA node, which carries the DRA mark
    _run(api, tmp_path / "mixed", {NODES[0]: "device-plugin", NODES[1]: "dra"})
    assert _names(api, "daemonset", "-n", "kube-system") >= {"nvidia-device-plugin-daemonset"}
    daemonset = json.loads(kubectl(api, "get", "-n", "kube-system", "daemonset", "nvidia-device-plugin-daemonset",
                                   "-o", "json").stdout)
    terms = daemonset["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": DRA_MARK, "operator": "NotIn", "values": ["dra"]}]}]
    assert _names(api, "deviceclass") >= classes | {FOREIGN_CLASS}
    assert _names(api, "resourceclaimtemplate", "-n", TEAM) == claim_templates
    assert _dra_marked(api) == {NODES[1]}

    # every node on DRA: the device plugin's DaemonSet goes, the DRA objects stay
    _run(api, tmp_path / "dra", {NODES[0]: "dra", NODES[1]: "dra"})
    assert "nvidia-device-plugin-daemonset" not in _names(api, "daemonset", "-n", "kube-system")
    assert _names(api, "deviceclass") >= classes and _dra_marked(api) == set(NODES)

    # a DeviceClass of the role's name that lost the role's mark is someone else's now: it stays
    kept = sorted(classes)[0]
    kubectl(api, "label", "deviceclass", kept, f"{MARK}-")
    # every node back on the device plugin: the marked DRA objects and the nodes' DRA mark go, nothing else
    out = _run(api, tmp_path / "device-plugin", {NODES[0]: "device-plugin", NODES[1]: "device-plugin"})
    assert "Delete them." in out
    assert _names(api, "deviceclass") & (classes | {FOREIGN_CLASS}) == {kept, FOREIGN_CLASS}
    assert _names(api, "resourceclaimtemplate", "-n", TEAM) == set()
    assert _dra_marked(api) == set()
    assert "nvidia-device-plugin-daemonset" in _names(api, "daemonset", "-n", "kube-system")


def test_a_mixed_gpu_operator_cluster_is_refused(loopback_api, tmp_path):
    with pytest.raises(AssertionError, match="gpu-operator is every GPU"):
        _run(loopback_api, tmp_path, {NODES[0]: "gpu-operator", NODES[1]: "dra"})
