"""The k8s_gpu and dcgm_exporter roles render manifests that real Kubernetes schemas accept.

The roles run for real (ansible-playbook, local connection, the site's group_vars) into a
temporary directory; every document of the directory that kubectl applies is validated offline
with kubernetes-validate in strict mode, and the GPU Operator's Helm values (rendered elsewhere)
against a schema derived from the chart's documented values (scripts/derive_helm_values_schema.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

kubernetes_validate = pytest.importorskip("kubernetes_validate")

REPO_ROOT = Path(__file__).resolve().parents[2]
KUBERNETES_VERSION = "1.31"
OPERATOR_CHART_VERSION = "v26.7.0"
OPERATOR_VALUES_SCHEMA = Path(__file__).parent / "schemas" / f"gpu-operator-{OPERATOR_CHART_VERSION}.values.schema.json"
TEAMS = [{"name": "team-vision", "gpus": 16}, {"name": "team-llm", "gpus": 64}]
NODES = [
    {"name": "su01-r01-gpu01", "gpu_model": "H200", "gpu_count": 8},
    {"name": "su01-r01-gpu02", "gpu_model": "H200", "gpu_count": 8},
]
TIME_SLICING_REPLICAS = 4

RENDER_PLAYBOOK = """
- name: Render the GPU manifests for validation.
  hosts: localhost
  connection: local
  gather_facts: true
  roles:
    - k8s_gpu
    - dcgm_exporter
"""


def _render(out_dir: Path, extravars: dict) -> Path:
    """Run the two roles with the site's group_vars; return the directory kubectl would apply."""
    manifest_dir = out_dir / "manifests"
    playbook = out_dir / "render.yml"
    playbook.write_text(RENDER_PLAYBOOK)
    if not (out_dir / "group_vars").exists():
        (out_dir / "group_vars").symlink_to(REPO_ROOT / "playbooks" / "group_vars")
    varsfile = out_dir / "vars.json"
    varsfile.write_text(
        json.dumps(
            {
                "k8s_gpu_manifest_dir": str(manifest_dir),
                "k8s_gpu_helm_values_dir": str(out_dir / "helm"),
                "dcgm_exporter_manifest_dir": str(manifest_dir),
                "dcgm_exporter_host_service_enabled": False,
                "k8s_gpu_kubernetes_version": KUBERNETES_VERSION,
                # The control node's own interpreter: discovery may pick a broken shim.
                "ansible_python_interpreter": sys.executable,
                **extravars,
            }
        )
    )
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO_ROOT / "playbooks" / "ansible.cfg"),
        "ANSIBLE_ROLES_PATH": str(REPO_ROOT / "roles"),
        "ANSIBLE_LOCAL_TEMP": str(out_dir / "ansible-tmp"),
        "ANSIBLE_HOME": str(out_dir / "ansible-home"),
    }
    played = subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible-playbook"),
            "-i",
            "localhost,",
            str(playbook),
            "-e",
            f"@{varsfile}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert played.returncode == 0, played.stdout + played.stderr
    return manifest_dir


@pytest.fixture(scope="module")
def full_manifests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Device plugin with time-slicing, team quotas and node manifests."""
    return _render(
        tmp_path_factory.mktemp("k8s-full"),
        {"k8s_gpu_teams": TEAMS, "k8s_gpu_nodes": NODES, "k8s_gpu_time_slicing_replicas": TIME_SLICING_REPLICAS},
    )


@pytest.fixture(scope="module")
def plain_manifests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Role defaults: device plugin and RuntimeClass only."""
    return _render(tmp_path_factory.mktemp("k8s-plain"), {})


@pytest.fixture(scope="module")
def operator_switch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Device-plugin mode first, then GPU Operator mode into the same directories (a site switching over)."""
    out = tmp_path_factory.mktemp("k8s-operator")
    _render(out, {"k8s_gpu_teams": TEAMS, "k8s_gpu_nodes": NODES})
    _render(
        out,
        {
            "k8s_gpu_teams": TEAMS,
            "k8s_gpu_nodes": NODES,
            "k8s_gpu_mode": "gpu-operator",
            "k8s_gpu_time_slicing_replicas": TIME_SLICING_REPLICAS,
        },
    )
    return out


@pytest.fixture(scope="module")
def operator_own_dcgm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GPU Operator mode with the operator's dcgm-exporter turned off: the role's DaemonSet takes over."""
    out = tmp_path_factory.mktemp("k8s-operator-dcgm")
    _render(out, {"k8s_gpu_mode": "gpu-operator", "k8s_gpu_operator_dcgm_exporter_enabled": False})
    return out


def _values(out_dir: Path) -> dict:
    return yaml.safe_load((out_dir / "helm" / "gpu-operator-values.yaml").read_text())


def _documents(manifest_dir: Path) -> list[tuple[str, dict]]:
    """Every document of every file kubectl apply -f would read (top level) plus nodes/."""
    docs = []
    for path in sorted(manifest_dir.rglob("*")):
        if path.is_dir():
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                docs.append((str(path.relative_to(manifest_dir)), doc))
    return docs


def _kinds(manifest_dir: Path) -> list[str]:
    return sorted(doc["kind"] for _, doc in _documents(manifest_dir))


def test_full_render_has_every_expected_object(full_manifests: Path) -> None:
    assert _kinds(full_manifests) == sorted(
        ["RuntimeClass", "ConfigMap", "DaemonSet"]
        + ["Namespace", "ResourceQuota"] * len(TEAMS)
        + ["Node"] * len(NODES)
        + ["Namespace", "ConfigMap", "DaemonSet", "Service"]  # dcgm-exporter
    )


def test_plain_render_has_device_plugin_runtimeclass_and_dcgm(plain_manifests: Path) -> None:
    assert _kinds(plain_manifests) == sorted(
        ["RuntimeClass", "DaemonSet", "Namespace", "ConfigMap", "DaemonSet", "Service"]
    )


@pytest.mark.parametrize("fixture_name", ["full_manifests", "plain_manifests", "operator_switch", "operator_own_dcgm"])
def test_every_manifest_validates_against_the_kubernetes_schema(
    fixture_name: str, request: pytest.FixtureRequest
) -> None:
    manifest_dir = request.getfixturevalue(fixture_name)
    if fixture_name.startswith("operator"):
        manifest_dir = manifest_dir / "manifests"
    errors = []
    for name, doc in _documents(manifest_dir):
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{name} {doc.get('kind')}/{doc.get('metadata', {}).get('name')}: {exc.message}")
    assert errors == []


def test_validator_rejects_a_broken_manifest(full_manifests: Path) -> None:
    """Guard against a vacuous validation: a mistyped field must fail."""
    _, daemonset = next((n, d) for n, d in _documents(full_manifests) if d["kind"] == "DaemonSet")
    daemonset["spec"]["template"]["spec"]["tolerationz"] = []
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(daemonset, KUBERNETES_VERSION, strict=True)


def test_resource_quotas_limit_only_requests_nvidia_com_gpu(full_manifests: Path) -> None:
    quotas = {
        d["metadata"]["namespace"]: d["spec"]["hard"]
        for _, d in _documents(full_manifests)
        if d["kind"] == "ResourceQuota"
    }
    assert quotas == {team["name"]: {"requests.nvidia.com/gpu": str(team["gpus"])} for team in TEAMS}


def test_runtime_class_nvidia_uses_handler_nvidia(full_manifests: Path) -> None:
    (runtime_class,) = [d for _, d in _documents(full_manifests) if d["kind"] == "RuntimeClass"]
    assert (runtime_class["metadata"]["name"], runtime_class["handler"]) == ("nvidia", "nvidia")


def test_time_slicing_config_shares_each_gpu(full_manifests: Path) -> None:
    (config_map,) = [
        d
        for _, d in _documents(full_manifests)
        if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "nvidia-device-plugin-config"
    ]
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    assert config["version"] == "v1"
    assert config["sharing"]["timeSlicing"]["resources"] == [
        {"name": "nvidia.com/gpu", "replicas": TIME_SLICING_REPLICAS}
    ]


def test_device_plugin_reads_the_time_slicing_config(full_manifests: Path) -> None:
    (daemonset,) = [
        d
        for _, d in _documents(full_manifests)
        if d["kind"] == "DaemonSet" and d["metadata"]["name"] == "nvidia-device-plugin-daemonset"
    ]
    pod = daemonset["spec"]["template"]["spec"]
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
    assert env["CONFIG_FILE"] == "/config/config.yaml"
    assert {"name": "config", "configMap": {"name": "nvidia-device-plugin-config"}} in pod["volumes"]


def test_gpu_nodes_get_label_and_taint(full_manifests: Path) -> None:
    nodes = {d["metadata"]["name"]: d for _, d in _documents(full_manifests) if d["kind"] == "Node"}
    assert sorted(nodes) == sorted(n["name"] for n in NODES)
    for node in nodes.values():
        assert node["metadata"]["labels"]["nvidia.com/gpu.present"] == "true"
        assert node["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]


def test_dcgm_metrics_cover_utilisation_memory_temperature_power_and_nvlink(full_manifests: Path) -> None:
    (config_map,) = [
        d
        for _, d in _documents(full_manifests)
        if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "dcgm-exporter-metrics"
    ]
    fields = {line.split(",")[0].strip() for line in config_map["data"]["clusterforge-counters.csv"].splitlines()}
    assert {
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_PROF_NVLINK_TX_BYTES",
        "DCGM_FI_PROF_NVLINK_RX_BYTES",
    } <= fields


def _dcgm_daemonsets(manifest_dir: Path) -> list[dict]:
    return [d for _, d in _documents(manifest_dir) if d["kind"] == "DaemonSet" and "dcgm" in d["metadata"]["name"]]


def test_operator_mode_keeps_helm_values_out_of_the_kubectl_directory(operator_switch: Path) -> None:
    """The directory kubectl applies holds only Kubernetes objects; the operator owns its parts."""
    files = sorted(p.name for p in (operator_switch / "manifests").iterdir() if p.is_file())
    assert files == ["40-team-quotas.yaml"], files  # device plugin, RuntimeClass, dcgm DaemonSet removed
    assert sorted(p.name for p in (operator_switch / "helm").iterdir()) == ["gpu-operator-values.yaml"]
    assert _kinds(operator_switch / "manifests") == sorted(
        ["Namespace", "ResourceQuota"] * len(TEAMS) + ["Node"] * len(NODES)
    )


def test_operator_values_validate_against_the_chart_schema(operator_switch: Path, operator_own_dcgm: Path) -> None:
    schema = json.loads(OPERATOR_VALUES_SCHEMA.read_text())
    for out in (operator_switch, operator_own_dcgm):
        jsonschema.validate(_values(out), schema)


def test_chart_schema_rejects_a_misplaced_value(operator_switch: Path) -> None:
    """Guard against a vacuous schema: a key the chart does not document must fail."""
    schema = json.loads(OPERATOR_VALUES_SCHEMA.read_text())
    values = _values(operator_switch)
    values["dcgmExporter"]["enable"] = True
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(values, schema)
    values = _values(operator_switch)
    values["driver"]["enabled"] = "false"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(values, schema)


def test_operator_values_leave_driver_and_toolkit_to_the_hosts(operator_switch: Path) -> None:
    values = _values(operator_switch)
    assert values["driver"]["enabled"] is False and values["toolkit"]["enabled"] is False
    assert values["devicePlugin"]["enabled"] is True
    toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    assert toleration in values["daemonsets"]["tolerations"]


def test_operator_time_slicing_config_is_a_device_plugin_config(operator_switch: Path) -> None:
    config = _values(operator_switch)["devicePlugin"]["config"]
    assert config["create"] is True and config["default"] in config["data"]
    plugin_config = yaml.safe_load(config["data"][config["default"]])
    assert plugin_config["version"] == "v1"
    assert plugin_config["sharing"]["timeSlicing"]["resources"] == [
        {"name": "nvidia.com/gpu", "replicas": TIME_SLICING_REPLICAS}
    ]


@pytest.mark.parametrize("fixture_name", ["operator_switch", "operator_own_dcgm"])
def test_exactly_one_dcgm_exporter(fixture_name: str, request: pytest.FixtureRequest) -> None:
    out = request.getfixturevalue(fixture_name)
    from_operator = _values(out)["dcgmExporter"]["enabled"]
    from_role = _dcgm_daemonsets(out / "manifests")
    assert int(from_operator) + len(from_role) == 1, (from_operator, from_role)


def test_device_plugin_mode_renders_no_helm_values(full_manifests: Path) -> None:
    assert not (full_manifests.parent / "helm").exists()


def _role_yaml(path: str) -> object:
    return yaml.safe_load((REPO_ROOT / "roles" / "k8s_gpu" / path).read_text())


def test_operator_chart_is_pinned_and_installed_with_kubernetes_core_helm() -> None:
    defaults = _role_yaml("defaults/main.yml")
    assert defaults["k8s_gpu_operator_chart_version"] == OPERATOR_CHART_VERSION
    (helm_task,) = [t for t in _role_yaml("tasks/apply.yml") if "kubernetes.core.helm" in t]
    args = helm_task["kubernetes.core.helm"]
    assert args["chart_version"] == "{{ k8s_gpu_operator_chart_version }}"
    assert args["values_files"] == ["{{ k8s_gpu_helm_values_dir }}/gpu-operator-values.yaml"]


def test_device_plugin_image_is_the_current_release() -> None:
    """v0.20.0 is the k8s-device-plugin release the operator chart v26.7.0 ships too."""
    assert _role_yaml("defaults/main.yml")["k8s_gpu_device_plugin_image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"


def test_hostile_label_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="label and taint keys"):
        _render(tmp_path, {"k8s_gpu_node_labels": {"nvidia.com/gpu.present": "true\nkind: Secret"}})


def test_device_plugin_applies_over_nvidias_static_install(full_manifests: Path) -> None:
    # NVIDIA/k8s-device-plugin deployments/static/nvidia-device-plugin.yml (commit 1c3a10b): a DaemonSet's
    # selector is immutable, so applying over that install needs its name, namespace and selector.
    (daemonset,) = [d for _, d in _documents(full_manifests)
                    if d["kind"] == "DaemonSet" and d["metadata"]["name"] == "nvidia-device-plugin-daemonset"]
    assert daemonset["metadata"]["namespace"] == "kube-system"
    assert daemonset["spec"]["selector"] == {"matchLabels": {"name": "nvidia-device-plugin-ds"}}
    assert daemonset["spec"]["template"]["metadata"]["labels"]["name"] == "nvidia-device-plugin-ds"
    pod = daemonset["spec"]["template"]["spec"]
    assert {"name": "kubelet-device-plugins-dir",
            "hostPath": {"path": "/var/lib/kubelet/device-plugins", "type": "Directory"}} in pod["volumes"]
