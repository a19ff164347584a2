"""The Slurm plan and files (plan/slurm.py, plan/nccl.py, render/slurm/): each rule on its own.

topology/block is not in Debian's Slurm 22.05, so its grammar is checked here against SchedMD's
topology.conf(5): 23.11 (tag slurm-23-11-0-1) has BlockName/Nodes and an optional BlockLevels; 24.05 (tag
slurm-24-05-0-1) replaced BlockLevels with BlockSizes, whose base size every block must reach and whose
further sizes are powers of two times the base.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from clusterforge.model import ClusterSpec, load_cluster
from clusterforge.model.control import Control
from clusterforge.model.slurm import Slurm, SlurmPartition
from clusterforge.plan import Plan, plan_cluster
from clusterforge.plan.slurm import gres_type, plan_slurm
from clusterforge.render.ansible_inventory import ansible_tree
from clusterforge.render.slurm import slurm_files
from clusterforge.render.slurm.node_files import gres_conf
from clusterforge.render.yamltext import UnsafeTolerantLoader

ROOT = Path(__file__).resolve().parents[2]


@cache
def spec_of(example: str) -> ClusterSpec:
    return load_cluster(ROOT / "inventory" / example)[0]


def with_slurm(example: str, slurm: Slurm = Slurm(), version: str = "22.05", nccl: str | None = None,
               controls: int = 1) -> Plan:
    spec = spec_of(example)
    software = {"slurm_version": version} | ({"nccl_version": nccl} if nccl else {})
    return plan_cluster(spec.model_copy(update={
        "schedulers": ["kubernetes", "slurm"], "slurm": slurm,
        "control": Control(nodes=controls, server_model="control-1u"),
        "software": spec.software.model_copy(update=software)}))


def lines(text: str, key: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(key + "=")]


@pytest.mark.parametrize(("model", "expected"), [("H100-SXM5-80GB", "h100"), ("H200", "h200"), ("GB200", "gb200"),
                                                 ("B300 Ultra", "b300")])
def test_gres_type_is_the_models_first_word(model: str, expected: str) -> None:
    assert gres_type(model) == expected
    nvml_name = {"h100": "nvidia_h100_80gb_hbm3", "h200": "nvidia_h200", "gb200": "nvidia_gb200",
                 "b300": "nvidia_b300_sxm6_ac"}[expected]  # NVML names as Slurm spells them
    assert expected in nvml_name


def test_node_lines_carry_the_catalogs_cpu_and_memory() -> None:
    plan = with_slurm("superpod-4su.yaml", Slurm(real_memory_pct=90))
    conf = slurm_files(plan)["slurm.conf"]
    nodes = lines(conf, "NodeName")
    assert len(nodes) == plan.summary.servers == 128
    # DGX H100: 2 x 56 cores x 2 threads, 2048 GiB; RealMemory 90 % of it in MiB
    assert "Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=1887436 Gres=gpu:h100:8" in nodes[0]
    device = plan.device(plan.slurm.nodes[0].name)
    assert f"NodeAddr={device.management_ip} " in nodes[0]


def test_simulated_nodes_are_small_and_say_so() -> None:
    conf = slurm_files(with_slurm("superpod-4su.yaml", Slurm(hardware="simulated")))["slurm.conf"]
    assert "Sockets=1 CoresPerSocket=1 ThreadsPerCore=1 RealMemory=512 Gres=gpu:h100:8" in lines(conf, "NodeName")[0]
    assert "SIMULATED" in conf and "# su01-r01-gpu01: catalog: 2 x 56 cores x 2 threads, 2048 GiB" in conf


def test_controllers_in_order_and_accounting_on_the_first() -> None:
    plan = with_slurm("roce-128gpu.yaml", controls=3)
    conf = slurm_files(plan)["slurm.conf"]
    controls = [d for d in plan.devices if d.kind == "control"]
    assert lines(conf, "SlurmctldHost") == [f"SlurmctldHost={d.name}({d.management_ip})" for d in controls]
    assert lines(conf, "AccountingStorageHost") == [f"AccountingStorageHost={controls[0].management_ip}"]
    for needed in ("SelectType=select/cons_tres", "GresTypes=gpu", "ProctrackType=proctrack/cgroup",
                   "TaskPlugin=task/cgroup,task/affinity", "AccountingStorageType=accounting_storage/slurmdbd",
                   "AccountingStorageEnforce=associations,limits,safe", "TopologyPlugin=topology/tree"):
        assert needed in conf.splitlines()


def test_partitions_default_one_per_su_the_first_default() -> None:
    conf = slurm_files(with_slurm("superpod-4su.yaml"))["slurm.conf"]
    parts = lines(conf, "PartitionName")
    assert [p.split()[0] for p in parts] == [f"PartitionName=su0{i}" for i in (1, 2, 3, 4)]
    assert ["Default=YES" in p for p in parts] == [True, False, False, False]


def test_declared_partitions_with_no_default_make_the_first_one() -> None:
    slurm = Slurm(partitions=[SlurmPartition(name="all"), SlurmPartition(name="su2", sus=[2], max_time="2-00:00:00",
                                                                         default_time="30")])
    plan = with_slurm("superpod-4su.yaml", slurm)
    parts = {p.name: p for p in plan.slurm.partitions}
    assert parts["all"].default and not parts["su2"].default
    assert len(parts["all"].nodes) == 128 and {n[:4] for n in parts["su2"].nodes} == {"su02"}
    conf = slurm_files(plan)["slurm.conf"]
    assert "MaxTime=2-00:00:00 DefaultTime=30 State=UP" in conf


def test_gres_files_one_per_gpu() -> None:
    gres = slurm_files(with_slurm("superpod-4su.yaml"))["gres.conf"]
    (line,) = lines(gres, "NodeName")
    assert line.endswith(" Name=gpu Type=h100 File=/dev/nvidia[0-7]")
    slurm = with_slurm("roce-128gpu.yaml").slurm
    one_gpu = replace(slurm, nodes=tuple(replace(n, gpus=1) for n in slurm.nodes[:2]))
    assert lines(gres_conf("x", one_gpu), "NodeName") == ["NodeName=su01-r01-gpu[01-02] Name=gpu Type=h200"
                                                          " File=/dev/nvidia0"]


def test_gres_nvml_and_simulated() -> None:
    nvml = slurm_files(with_slurm("superpod-4su.yaml", Slurm(gpu_detection="nvml")))["gres.conf"]
    assert lines(nvml, "AutoDetect") == ["AutoDetect=nvml"] and "File=" not in nvml
    simulated = slurm_files(with_slurm("superpod-4su.yaml", Slurm(hardware="simulated")))["gres.conf"]
    assert "SIMULATED" in simulated and "File=/dev/nvidia" not in simulated and "Count=" not in simulated
    assert lines(simulated, "NodeName")[0].endswith(" Name=gpu Type=h100"
                                                    " File=/var/lib/clusterforge/simulated-gpus/nvidia[0-7]")


def test_cgroup_conf_constrains_devices() -> None:
    cgroup = slurm_files(with_slurm("roce-128gpu.yaml"))["cgroup.conf"].splitlines()
    assert {"ConstrainDevices=yes", "ConstrainCores=yes", "ConstrainRAMSpace=yes"} <= set(cgroup)
    simulated = slurm_files(with_slurm("roce-128gpu.yaml", Slurm(hardware="simulated")))["cgroup.conf"].splitlines()
    assert "ConstrainDevices=no" in simulated and "ConstrainCores=yes" in simulated


@pytest.mark.parametrize(("version", "plugin", "sizes"), [("22.05", "topology/tree", False),
                                                          ("23.02", "topology/tree", False),
                                                          ("23.11", "topology/block", False),
                                                          ("24.05", "topology/block", True),
                                                          ("25.11.1", "topology/block", True)])
def test_block_topology_by_slurm_version(version: str, plugin: str, sizes: bool) -> None:
    plan = with_slurm("gb200-nvl72-su.yaml", version=version)
    files = slurm_files(plan)
    assert lines(files["slurm.conf"], "TopologyPlugin") == [f"TopologyPlugin={plugin}"]
    topo = files["topology.conf"]
    if plugin == "topology/tree":
        assert lines(topo, "SwitchName") and not lines(topo, "BlockName")
        return
    blocks = lines(topo, "BlockName")
    assert len(blocks) == len(plan.nvlink_domains) == 8
    assert all(re.fullmatch(r"BlockName=\S+ Nodes=\S+", b) for b in blocks)  # topology.conf(5) 23.11 / 24.05
    assert not lines(topo, "SwitchName") and not lines(topo, "BlockLevels")
    if not sizes:
        assert not lines(topo, "BlockSizes")
        return
    (size_line,) = lines(topo, "BlockSizes")
    base = [int(s) for s in size_line.split("=", 1)[1].split(",")]
    assert base == [18]  # 18 compute trays per NVL72 rack
    assert all(len(d.members) >= base[0] for d in plan.nvlink_domains)  # every block reaches the base size


def test_no_topology_without_a_fabric() -> None:
    plan = with_slurm("roce-128gpu.yaml")
    spec = spec_of("roce-128gpu.yaml").model_copy(update={"schedulers": ["slurm"], "control": Control(
        nodes=1, server_model="control-1u")})
    assert plan_slurm(spec, plan.devices, None, plan.host_roce).topology_plugin is None
    files = slurm_files(replace(plan, slurm=replace(plan.slurm, topology_plugin=None)))
    assert "topology.conf" not in files and not lines(files["slurm.conf"], "TopologyPlugin")


def test_accounts_carry_the_teams_gpu_limits() -> None:
    plan = with_slurm("superpod-4su.yaml")
    data = json.loads(slurm_files(plan)["accounts.json"])
    assert data["cluster"] == "superpod-4su"
    assert data["accounts"] == [{"name": t.name, "parent": "root", "gpus": t.gpus, "grp_tres": f"gres/gpu={t.gpus}"}
                                for t in spec_of("superpod-4su.yaml").teams]
    assert data["accounts"]


def test_nccl_on_roce() -> None:
    plan = with_slurm("roce-128gpu.yaml")
    text = slurm_files(plan)["nccl/su01-r01-gpu01.conf"]
    assert lines(text, "NCCL_IB_TC") == [f"NCCL_IB_TC={plan.host_roce.roce_tos}"] == ["NCCL_IB_TC=106"]
    assert lines(text, "NCCL_SOCKET_IFNAME") == ["NCCL_SOCKET_IFNAME==mgmt0"]
    assert not lines(text, "NCCL_IB_GID_INDEX") and "2.21+" in text  # NCCL 2.21 picks the GID itself
    old = slurm_files(with_slurm("roce-128gpu.yaml", nccl="2.18"))["nccl/su01-r01-gpu01.conf"]
    assert lines(old, "NCCL_IB_GID_INDEX") == ["NCCL_IB_GID_INDEX=3"]


def test_nccl_on_infiniband_names_the_dgx_hcas_in_rail_order() -> None:
    text = slurm_files(with_slurm("superpod-4su.yaml"))["nccl/su01-r01-gpu01.conf"]
    assert lines(text, "NCCL_IB_HCA") == ["NCCL_IB_HCA==mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,"
                                          "mlx5_10:1,mlx5_11:1"]
    assert not lines(text, "NCCL_IB_TC")


def test_nccl_hca_unset_where_the_catalog_names_none() -> None:
    text = slurm_files(with_slurm("roce-128gpu.yaml"))["nccl/su01-r01-gpu01.conf"]
    assert not lines(text, "NCCL_IB_HCA") and "nics.data.rdma_devices" in text


def test_inventory_groups_and_vars_only_with_slurm() -> None:
    plain = ansible_tree(plan_cluster(spec_of("roce-128gpu.yaml")))
    assert "slurm_" not in plain["inventory.yml"] and "cf_slurm" not in plain["host_vars/su01-r01-gpu01.yml"]
    plan = with_slurm("roce-128gpu.yaml")
    files = ansible_tree(plan)
    inventory = files["inventory.yml"]
    assert "slurm_controller:\n      hosts:\n        ctl-01: null" in inventory and "slurm_nodes:" in inventory
    servers = [d.name for d in plan.devices if d.kind == "server"]
    import yaml

    node_vars = [yaml.load(files[f"host_vars/{h}.yml"], Loader=UnsafeTolerantLoader)["cf_slurm"] for h in servers]
    assert all(v == node_vars[0] for v in node_vars)  # nothing of the host: part of the golden image profile
    assert node_vars[0]["role"] == "node" and node_vars[0]["config_dir"] == "slurm"
    assert "simulated_gpu_files" not in node_vars[0]
    lab = yaml.load(ansible_tree(plan_cluster(spec_of("lab.yaml")))["host_vars/su01-r01-gpu01.yml"],
                    Loader=UnsafeTolerantLoader)["cf_slurm"]
    assert lab["simulated_gpu_files"] == [f"/var/lib/clusterforge/simulated-gpus/nvidia{i}" for i in (0, 1)]
    control = yaml.load(files["host_vars/ctl-01.yml"], Loader=UnsafeTolerantLoader)["cf_slurm"]
    assert control["role"] == "controller" and control["accounts_file"] == "slurm/accounts.json"
    assert [n["name"] for n in control["nodes"]] == servers
    rendered = slurm_files(plan)
    assert set(control["config_files"]) <= set(rendered)
    assert all(f"nccl/{h}.conf" in rendered for h in servers)
