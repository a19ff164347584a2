"""The schedulers and Slurm in the declaration: each rule refuses at its file, line and field with what is
allowed, and today's declarations keep their behaviour (Kubernetes only, no Slurm files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.model import DeclarationError, load_cluster
from clusterforge.render.tree import render_tree

ROOT = Path(__file__).resolve().parents[2]
LAB = (ROOT / "inventory" / "lab.yaml").read_text()


def declared(tmp_path: Path, text: str) -> Path:
    shutil.copytree(ROOT / "inventory" / "catalog", tmp_path / "catalog", dirs_exist_ok=True)
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    return path


def problems(tmp_path: Path, text: str) -> list[tuple[int, str, str]]:
    with pytest.raises(DeclarationError) as caught:
        load_cluster(declared(tmp_path, text))
    return [(p.line, p.path, p.message) for p in caught.value.problems]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def with_slurm(extra: str) -> str:
    return LAB.replace("slurm:\n  hardware: simulated\n", "slurm:\n  hardware: simulated\n" + extra)


def test_lab_declares_both_schedulers() -> None:
    _, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    assert plan.schedulers == ("kubernetes", "slurm")
    assert plan.slurm is not None and [c.name for c in plan.slurm.controllers] == ["ctl-01"]


@pytest.mark.parametrize("example", ["roce-128gpu.yaml", "superpod-4su.yaml", "device-h200x1.yaml"])
def test_existing_declarations_default_to_kubernetes_without_slurm_files(example: str) -> None:
    _, plan, _ = load_and_plan(ROOT / "inventory" / example)
    assert plan.schedulers == ("kubernetes",) and plan.slurm is None
    tree = render_tree(plan)
    assert not tree.slurm and not any(path.startswith("slurm/") for path in tree.files())


@pytest.mark.parametrize(("name", "why"), [
    ("Gpu", "not a valid Slurm name"), ("a,b", "not a valid Slurm name"), ("default", "DEFAULT"),
    ("x" * 41, "not a valid Slurm name"), ("gpu node", "not a valid Slurm name"), ("1gpu", "not a valid Slurm name"),
])
def test_partition_name_through_slurms_grammar(tmp_path: Path, name: str, why: str) -> None:
    text = with_slurm(f"  partitions:\n    - {{name: '{name}', sus: [1]}}\n")
    found = problems(tmp_path, text)
    line = line_of(text, f"name: '{name}'")
    assert any(ln == line and path == "slurm.partitions.0.name" and why in msg for ln, path, msg in found), found
    if why != "DEFAULT":
        assert any("a-z, 0-9, '_' and '-'" in msg for _, _, msg in found)


def test_team_names_become_accounts(tmp_path: Path) -> None:
    text = LAB.replace("{name: research, gpus: 6}", "{name: root, gpus: 6}")
    found = problems(tmp_path, text)
    assert (line_of(text, "name: root"), "teams.0.name") in [(ln, p) for ln, p, _ in found]
    assert any("root account" in msg for _, _, msg in found)


def test_team_name_past_slurms_length(tmp_path: Path) -> None:
    long = "r" * 45  # a valid declaration name (63), too long for a Slurm account (40)
    text = LAB.replace("{name: research, gpus: 6}", f"{{name: {long}, gpus: 6}}")
    found = problems(tmp_path, text)
    assert any(p == "teams.0.name" and "Slurm account" in msg for _, p, msg in found), found


def test_cluster_name_checked_when_it_is_the_slurm_cluster_name(tmp_path: Path) -> None:
    long = "lab-" + "x" * 40
    text = LAB.replace("name: lab\nsite:", f"name: {long}\nsite:")
    found = problems(tmp_path, text)
    assert any(ln == 3 and p == "name" and "ClusterName" in msg for ln, p, msg in found), found
    load_cluster(declared(tmp_path, with_slurm("  cluster_name: lab\n").replace("name: lab\nsite:",
                                                                              f"name: {long}\nsite:")))


def test_cluster_name_declared_through_the_grammar(tmp_path: Path) -> None:
    text = with_slurm("  cluster_name: Lab\n")
    found = problems(tmp_path, text)
    assert any(ln == line_of(text, "cluster_name: Lab") and p == "slurm.cluster_name" for ln, p, _ in found), found


def test_team_gpu_limit_above_the_cluster_refused_at_its_field(tmp_path: Path) -> None:
    text = LAB.replace("{name: inference, gpus: 2}", "{name: inference, gpus: 9}")
    found = problems(tmp_path, text)
    line = line_of(text, "gpus: 9")
    assert any(ln == line and p == "teams.1.gpus" and "exceed the cluster's 8" in msg for ln, p, msg in found), found


def test_slurm_needs_a_control_node(tmp_path: Path) -> None:
    text = LAB.replace("control:\n  nodes: 1\n  server_model: control-1u\n", "")
    found = problems(tmp_path, text)
    assert any(p == "schedulers.1" and "control node" in msg for _, p, msg in found), found


def test_slurm_settings_without_slurm_refused(tmp_path: Path) -> None:
    text = LAB.replace("schedulers: [kubernetes, slurm]", "schedulers: [kubernetes]")
    found = problems(tmp_path, text)
    assert any(ln == line_of(text, "hardware: simulated") - 1 and p == "slurm" for ln, p, _ in found), found


@pytest.mark.parametrize(("value", "message"), [("[slurm, slurm]", "listed twice"),
                                                ("[pbs]", "'kubernetes' or 'slurm'")])
def test_schedulers_are_known_and_once(tmp_path: Path, value: str, message: str) -> None:
    text = LAB.replace("schedulers: [kubernetes, slurm]", f"schedulers: {value}")
    found = problems(tmp_path, text)
    assert any(p.startswith("schedulers") and message in msg for _, p, msg in found), found


@pytest.mark.parametrize("version", ["21.08", "22.05.8.1"])
def test_slurm_version_supported(tmp_path: Path, version: str) -> None:
    text = LAB.replace('slurm_version: "22.05"', f'slurm_version: "{version}"')
    found = problems(tmp_path, text)
    assert any(ln == line_of(text, "slurm_version") and p == "software.slurm_version" and "22.05 or later" in msg
               for ln, p, msg in found), found


@pytest.mark.parametrize("value", ["7 days", "1-2-3", "forever", "1:2:3:4"])
def test_max_time_in_slurms_time_format(tmp_path: Path, value: str) -> None:
    text = with_slurm(f"  partitions:\n    - {{name: gpu, max_time: '{value}'}}\n")
    found = problems(tmp_path, text)
    assert any(p == "slurm.partitions.0.max_time" and "DAYS-HH:MM:SS" in msg for _, p, msg in found), found


def test_partition_rules(tmp_path: Path) -> None:
    text = with_slurm("  partitions:\n    - {name: gpu, default: true}\n    - {name: gpu, default: true, sus: [7]}\n")
    found = {(p, msg.split(";")[0]) for _, p, msg in problems(tmp_path, text)}
    assert ("slurm.partitions.1.name", "duplicate partition name 'gpu' (also at slurm.partitions.0.name)") in found
    assert any(p == "slurm.partitions.1.default" for p, _ in found)
    assert any(p == "slurm.partitions.1.sus.0" and "SU 7 is not declared" in m for p, m in found)


def test_partition_node_must_be_a_planned_gpu_server(tmp_path: Path) -> None:
    text = with_slurm("  partitions:\n    - {name: gpu, nodes: [su01-r01-gpu01, ctl-01]}\n")
    with pytest.raises(DeclarationError) as caught:
        load_and_plan(declared(tmp_path, text))
    found = [(p.line, p.path, p.message) for p in caught.value.problems]
    assert any(ln == line_of(text, "nodes: [su01") and p == "slurm.partitions.0.nodes.1"
               and "'ctl-01' is not a planned GPU server" in msg for ln, p, msg in found), found


def test_nvml_needs_real_gpus(tmp_path: Path) -> None:
    text = with_slurm("  gpu_detection: nvml\n")
    found = problems(tmp_path, text)
    assert any(p == "slurm.gpu_detection" and "real GPUs" in msg for _, p, msg in found), found


def test_slurm_node_lines_need_the_catalogs_cpu_and_memory(tmp_path: Path) -> None:
    text = LAB.replace("catalog: {}", "catalog:\n  servers:\n    hgx-h200-2gpu-bare:\n      vendor: x\n"
                       "      gpu: {model: H200, count: 2, memory_gb: 141, tflops_dense: {fp16: 1, bf16: 1, fp32: 1,"
                       " tf32: 1}}\n      nics: {data: {count: 2, speed_gbps: 400}}\n      psu: {count: 2, rating_w:"
                       " 2400}\n      max_draw_w: 2200\n      height_u: 2\n      weight_kg: 30\n      price: 1\n")
    text = text.replace("server_model: hgx-h200-2gpu\n", "server_model: hgx-h200-2gpu-bare\n")
    found = {p for _, p, _ in problems(tmp_path, text)}
    assert {"catalog.servers.hgx-h200-2gpu-bare.cpu", "catalog.servers.hgx-h200-2gpu-bare.memory_gb"} <= found


def test_rdma_devices_one_per_port(tmp_path: Path) -> None:
    catalog = (ROOT / "inventory" / "catalog" / "servers.yaml").read_text()
    shutil.copytree(ROOT / "inventory" / "catalog", tmp_path / "catalog", dirs_exist_ok=True)
    broken = catalog.replace("rdma_devices: [mlx5_0, mlx5_3,", "rdma_devices: [mlx5_3,", 1)
    assert broken != catalog
    (tmp_path / "catalog" / "servers.yaml").write_text(broken)
    path = tmp_path / "cluster.yaml"
    path.write_text(LAB)
    with pytest.raises(DeclarationError) as caught:
        load_cluster(path)
    found = [(p.file, p.path, p.message) for p in caught.value.problems]
    assert any(f.endswith("servers.yaml") and p == "catalog.servers.dgx-h100.nics.data.rdma_devices"
               and "7 RDMA devices for 8 ports" in m for f, p, m in found), found
