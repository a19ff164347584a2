"""k8s_gpu_mode: dra against the real resource.k8s.io/v1 API: the k8s_gpu role runs for real (ansible-playbook,
local connection, render only) with the plan's DeviceClasses (plan/dra.py) and teams, and every DRA object it
renders is sent with `kubectl apply --dry-run=server` to a real kube-apiserver on loopback, which validates the
objects and compiles the DeviceClasses' CEL selectors. No DRA driver runs: nothing is allocated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("kubernetes")
from kueue_helpers import kubectl  # noqa: E402
from layer_helpers import REPO_ROOT  # noqa: E402

RENDER_PLAYBOOK = """
- name: Render the GPU layer in DRA mode.
  hosts: localhost
  connection: local
  gather_facts: false
  roles:
    - k8s_gpu
"""
DRA_FILES = ("15-dra-device-classes.yaml", "45-dra-claim-templates.yaml")


def _render(work: Path, declaration: str) -> Path:
    from clusterforge.loading import load_and_plan
    from clusterforge.render.ansible_inventory import kubernetes_vars

    _, plan, _ = load_and_plan(REPO_ROOT / "inventory" / f"{declaration}.yaml")
    kube = kubernetes_vars(plan)
    (work / "render.yml").write_text(RENDER_PLAYBOOK)
    (work / "vars.json").write_text(json.dumps({
        "k8s_gpu_mode": "dra", "k8s_gpu_manifest_dir": str(work / "manifests"), "k8s_gpu_teams": kube["teams"],
        "k8s_gpu_nodes": kube["gpu_nodes"], "k8s_gpu_dra_device_classes": kube["gpu_device_classes"],
        "ansible_python_interpreter": sys.executable}))
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO_ROOT / "playbooks" / "ansible.cfg"),
           "ANSIBLE_ROLES_PATH": str(REPO_ROOT / "roles"), "ANSIBLE_LOCAL_TEMP": str(work / "ansible-tmp"),
           "ANSIBLE_HOME": str(work / "ansible-home")}
    played = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,",
                             str(work / "render.yml"), "-e", f"@{work / 'vars.json'}"],
                            env=env, capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stdout[-4000:] + played.stderr[-2000:]
    return work / "manifests"


@pytest.fixture(scope="module", params=["lab", "gb200-nvl72-su"])
def rendered(request, tmp_path_factory) -> Path:
    return _render(tmp_path_factory.mktemp(f"dra-{request.param}"), request.param)


def test_dra_mode_renders_no_device_plugin(rendered):
    names = sorted(p.name for p in rendered.glob("*.yaml"))
    assert set(DRA_FILES) <= set(names) and not any("device-plugin" in n or "runtimeclass" in n for n in names)


def test_the_dra_objects_pass_the_api_server(loopback_api, rendered):
    kubectl(loopback_api, "apply", "-f", str(rendered / "40-team-quotas.yaml"))  # the teams' namespaces
    for name in DRA_FILES:
        done = kubectl(loopback_api, "apply", "--dry-run=server", "--validate=strict", "-f", str(rendered / name))
        documents = [d for d in yaml.safe_load_all((rendered / name).read_text()) if d]
        assert documents and done.stdout.count("(server dry run)") == len(documents), done.stdout


def test_every_claim_template_names_a_rendered_device_class(rendered):
    classes = {d["metadata"]["name"] for d in yaml.safe_load_all((rendered / DRA_FILES[0]).read_text()) if d}
    claims = [d for d in yaml.safe_load_all((rendered / DRA_FILES[1]).read_text()) if d]
    assert classes and claims
    named = {r["exactly"]["deviceClassName"] for c in claims for r in c["spec"]["spec"]["devices"]["requests"]}
    assert named == classes


def test_a_broken_selector_is_refused(loopback_api, rendered):
    """The dry run compiles the CEL selectors: the same class with a typo in its expression is refused."""
    device_class = next(d for d in yaml.safe_load_all((rendered / DRA_FILES[0]).read_text()) if d)
    device_class["spec"]["selectors"][0]["cel"]["expression"] += " &&& true"
    done = kubectl(loopback_api, "apply", "--dry-run=server", "-f", "-", stdin=yaml.safe_dump(device_class),
                   check=False)
    assert done.returncode != 0 and "compilation failed" in done.stderr.lower(), done.stdout + done.stderr


def test_each_team_quota_caps_the_devices_of_every_class(loopback_api, rendered):
    """In DRA mode a team's ResourceQuota also caps the devices its ResourceClaims ask for per DeviceClass, under the
    API server's key `<class>.deviceclass.resource.k8s.io/devices` (k8s.io/api core/v1 ResourceClaimsPerClass),
    the team's GPUs of that model: they add up to its requests.nvidia.com/gpu. The API server accepted these
    quotas when test_the_dra_objects_pass_the_api_server applied them; they are read back from it here."""
    classes = {d["metadata"]["name"] for d in yaml.safe_load_all((rendered / DRA_FILES[0]).read_text()) if d}
    quotas = [d for d in yaml.safe_load_all((rendered / "40-team-quotas.yaml").read_text())
              if d and d["kind"] == "ResourceQuota"]
    assert quotas
    kubectl(loopback_api, "apply", "-f", str(rendered / "40-team-quotas.yaml"))
    for quota in quotas:
        hard = quota["spec"]["hard"]
        devices = {k: int(v) for k, v in hard.items() if k != "requests.nvidia.com/gpu"}
        assert set(devices) == {f"{c}.deviceclass.resource.k8s.io/devices" for c in classes}, hard
        assert sum(devices.values()) == int(hard["requests.nvidia.com/gpu"]), hard
        done = kubectl(loopback_api, "get", "resourcequota", "gpu-quota", "-n", quota["metadata"]["namespace"],
                       "-o", "json")
        assert json.loads(done.stdout)["spec"]["hard"] == hard


def test_the_node_template_asks_for_an_exact_count(rendered):
    """`<model>-node` asks for the most GPUs one node of the model has, as an exact count: Kueue counts only
    ExactCount requests (allocationMode All is never admitted) and the quota counts All as 32 devices."""
    classes = {d["metadata"]["name"]: d for d in yaml.safe_load_all((rendered / DRA_FILES[0]).read_text()) if d}
    claims = [d for d in yaml.safe_load_all((rendered / DRA_FILES[1]).read_text()) if d]
    node = [r["exactly"] for c in claims if c["metadata"]["name"].endswith("-node")
            for r in c["spec"]["spec"]["devices"]["requests"]]
    assert node and all(r["allocationMode"] == "ExactCount" and r["count"] >= 1 for r in node), node
    assert {r["deviceClassName"] for r in node} == set(classes)
