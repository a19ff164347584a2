"""The parsers the host checks rely on, fed real command output. A parser that cannot see a
fault makes its check unable to fail, so each one is also given the faulty sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clusterforge.verify.gpu_names import gpu_model_matches
from clusterforge.verify.hosts._parsers import (
    clock_offset_s,
    containerd_nvidia_runtime,
    count_nvswitches,
    has_modprobe_directive,
    parse_fabric_states,
    parse_ip_addr_json,
    parse_nvcc_release,
    parse_nvidia_smi_csv,
    parse_proc_modules,
    parse_proc_mounts,
    parse_unit_file,
    split_options,
    upstream_version,
    version_matches_pin,
)

PROC_MODULES_WITH_NOUVEAU = """\
nouveau 2842624 0 - Live 0x0000000000000000
mxm_wmi 16384 1 nouveau, Live 0x0000000000000000
drm_ttm_helper 16384 1 nouveau, Live 0x0000000000000000
"""
PROC_MODULES_NVIDIA = """\
nvidia_uvm 1802240 0 - Live 0x0000000000000000 (POE)
nvidia 62468096 5 nvidia_uvm, Live 0x0000000000000000 (POE)
"""


def test_nouveau_seen_in_proc_modules():
    assert "nouveau" in parse_proc_modules(PROC_MODULES_WITH_NOUVEAU)


def test_nouveau_absent_from_proc_modules():
    modules = parse_proc_modules(PROC_MODULES_NVIDIA)
    assert "nouveau" not in modules and "nvidia" in modules


@pytest.mark.parametrize(("text", "expected"), [
    ("blacklist nouveau\noptions nouveau modeset=0\n", True),
    ("  blacklist   nouveau  # keep nvidia\n", True),
    ("# blacklist nouveau\n", False),
    ("blacklist nouveau_fb\n", False),
    ("", False),
])  # fmt: skip
def test_modprobe_blacklist_directive(text, expected):
    assert has_modprobe_directive(text, "blacklist nouveau") is expected


def test_modprobe_options_directive_must_match_value():
    assert has_modprobe_directive("options nouveau modeset=0", "options nouveau modeset=0")
    assert not has_modprobe_directive("options nouveau modeset=1", "options nouveau modeset=0")


@pytest.mark.parametrize(("package_version", "upstream"), [
    ("535.261.03-1~deb12u1", "535.261.03"),
    ("1:535.261.03-1", "535.261.03"),
    ("580.159.04-0ubuntu1", "580.159.04"),
    ("535.261.03", "535.261.03"),
])  # fmt: skip
def test_upstream_version(package_version, upstream):
    assert upstream_version(package_version) == upstream


def test_version_pin_exact_and_branch():
    assert version_matches_pin("535.261.03", "535.261.03", "535")
    assert not version_matches_pin("535.247.01", "535.261.03", "535")
    assert version_matches_pin("535.247.01", "", "535")
    assert not version_matches_pin("550.54.15", "", "535")


def test_nvidia_smi_csv_rows():
    rows = parse_nvidia_smi_csv("0, NVIDIA H200, Enabled, 580.159.04\n1, NVIDIA H200, Disabled, 580.159.04\n",
                                ("index", "name", "persistence_mode", "driver_version"))
    assert [r["persistence_mode"] for r in rows] == ["Enabled", "Disabled"]
    assert rows[1]["name"] == "NVIDIA H200"


def test_nvidia_smi_csv_rejects_misaligned_rows():
    with pytest.raises(ValueError):
        parse_nvidia_smi_csv("0, NVIDIA H200\n", ("index", "name", "persistence_mode"))


@pytest.mark.parametrize(("expected", "reported", "match"), [
    ("H200", "NVIDIA H200", True),
    ("H200-SXM5-141GB", "NVIDIA H200", True),
    ("H100-SXM5-80GB", "NVIDIA H100 80GB HBM3", True),
    ("A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", True),
    ("H100-SXM5-80GB", "NVIDIA H200", False),
    ("H20", "NVIDIA H200", False),
    ("B200", "NVIDIA H200", False),
])  # fmt: skip
def test_gpu_model_matches(expected, reported, match):
    assert gpu_model_matches(expected, reported) is match


NVIDIA_SMI_Q = """\
==============NVSMI LOG==============

Attached GPUs                             : 2
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H200
    Fabric
        State                             : Completed
        Status                            : Success
        CliqueId                          : 0
    Processes                             : None

GPU 00000000:2A:00.0
    Product Name                          : NVIDIA H200
    Fabric
        State                             : In Progress
        Status                            : N/A
    Processes                             : None
"""


def test_fabric_states_per_gpu():
    assert parse_fabric_states(NVIDIA_SMI_Q) == [("Completed", "Success"), ("In Progress", "N/A")]


def test_fabric_states_absent():
    assert parse_fabric_states("GPU 00000000:18:00.0\n    Product Name : NVIDIA H200\n") == []


def test_nvswitch_count_from_pci_sysfs():
    lines = "0x10de 0x068000\n0x10de 0x068000\n0x10de 0x030200\n0x8086 0x068000\n"
    assert count_nvswitches(lines) == 2


@pytest.mark.parametrize(("text", "release"), [
    ("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.8, V11.8.89\n", "11.8"),
    ("Cuda compilation tools, release 13.0, V13.0.48\nBuild cuda_13.0.r13.0/compiler.36260728_0\n", "13.0"),
    ("bash: nvcc: command not found\n", None),
])  # fmt: skip
def test_nvcc_release(text, release):
    assert parse_nvcc_release(text) == release


# containerd's v2 config with the nvidia runtime (test_lab_checks.py installs the same file on a lab host)
CONTAINERD_V2 = (Path(__file__).parent / "data" / "containerd-nvidia-v2.toml").read_text()
CONTAINERD_V3 = """\
version = 3
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia.options]
    BinaryName = "/usr/bin/nvidia-container-runtime"
"""
CONTAINERD_RUNC_ONLY = """\
version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
"""


@pytest.mark.parametrize("text", [CONTAINERD_V2, CONTAINERD_V3])
def test_containerd_nvidia_runtime_found(text):
    runtime = containerd_nvidia_runtime(text)
    assert runtime and runtime["options"]["BinaryName"].endswith("nvidia-container-runtime")


@pytest.mark.parametrize("text", [CONTAINERD_RUNC_ONLY, "", "not = [toml"])
def test_containerd_nvidia_runtime_missing(text):
    assert containerd_nvidia_runtime(text) is None


IP_ADDR = json.dumps([
    {"ifname": "rail0", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 9000, "operstate": "UP",
     "addr_info": [{"family": "inet", "local": "198.19.64.1", "prefixlen": 31},
                   {"family": "inet6", "local": "fe80::1", "prefixlen": 64}]},
    {"ifname": "rail1", "flags": ["NO-CARRIER", "BROADCAST", "MULTICAST", "UP"], "mtu": 1500,
     "operstate": "DOWN", "addr_info": []},
])  # fmt: skip


def test_ip_addr_links():
    links = parse_ip_addr_json(IP_ADDR)
    assert links["rail0"].is_up and links["rail0"].mtu == 9000
    assert "198.19.64.1/31" in links["rail0"].addresses


def test_link_without_carrier_is_not_up():
    assert not parse_ip_addr_json(IP_ADDR)["rail1"].is_up


def test_proc_mounts_unescapes_paths():
    mounts = parse_proc_mounts("198.19.76.80:/export/hot /mnt/hot\\040tier nfs4 rw,relatime,vers=4.2 0 0\n")
    assert mounts[0].target == "/mnt/hot tier" and mounts[0].fstype == "nfs4"
    assert "vers=4.2" in mounts[0].options


def test_unit_file_sections():
    unit = parse_unit_file("# managed\n[Unit]\nAfter=a\nAfter=b\n"
                           "[Mount]\nWhat=s:/x\nWhere=/mnt/x\nOptions=rw,_netdev\n")
    assert unit["Unit"]["After"] == ["a", "b"]
    assert split_options(unit["Mount"]["Options"][-1]) == ["rw", "_netdev"]


def test_clock_offset_uses_round_trip_midpoint():
    assert clock_offset_s(100.0, 101.5, 101.0) == pytest.approx(1.0)
    assert clock_offset_s(100.0, 100.5, 101.0) == pytest.approx(0.0)


RECORDED = Path(__file__).resolve().parents[2] / "docs" / "acceptance"


@pytest.mark.parametrize(("record", "states"), [
    ("h200x1", [("N/A", "N/A")]),  # one H200 passed through to a VM, no NVSwitch
    ("h200x2", [("Completed", "Success")] * 2),  # two H200s of an HGX board
])  # fmt: skip
def test_fabric_states_of_recorded_h200_machines(record, states):
    path = RECORDED / record / "nvidia-smi-q.txt"
    if not path.is_file():
        pytest.skip(f"{path} is not in this checkout")
    assert parse_fabric_states(path.read_text()) == states
