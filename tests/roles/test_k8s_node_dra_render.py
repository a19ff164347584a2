"""What k8s_node writes for SIMULATED GPUs in DRA mode (k8s_node_simulated_gpu_api: dra, k8s_gpu_mode: dra), rendered
by Ansible itself (the role's defaults, vars and templates evaluated here, nothing run): the cf-sim-dra-driver unit
in place of cf-sim-gpu-plugin's, its product name one quoted argument, and the role's first task refusing a
product name or driver outside their grammar before anything is installed."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROLE = Path(__file__).resolve().parents[2] / "roles" / "k8s_node"
NODE = {"k8s_node_name": "su01-r01-gpu01", "k8s_node_simulated_gpus": 2, "k8s_node_simulated_gpu_api": "dra",
        "k8s_node_simulated_gpu_product": "NVIDIA H200-SXM5-141GB (SIMULATED)"}


def _play(tmp_path: Path, overrides: dict[str, object], tasks: list[dict[str, object]]) -> subprocess.CompletedProcess:
    (tmp_path / "templates").symlink_to(ROLE / "templates")
    (tmp_path / "vars.json").write_text(json.dumps(overrides))
    playbook = tmp_path / "play.yml"
    vars_files = [str(ROLE / "defaults" / "main.yml"), str(ROLE / "vars" / "main.yml")]
    playbook.write_text(json.dumps([{"hosts": "all", "gather_facts": False, "tasks": tasks, "vars_files": vars_files}]))
    env = {**os.environ, "ANSIBLE_LOCALHOST_WARNING": "False", "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_HOME": str(tmp_path / "ah")}
    return subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "su01-r01-gpu01,", "-c",
                           "local", "-e", f"ansible_python_interpreter={sys.executable}", "-e",
                           f"@{tmp_path / 'vars.json'}", str(playbook)],
                          capture_output=True, text=True, env=env, timeout=300)


def test_dra_mode_runs_the_simulated_dra_driver_with_its_product_as_one_argument(tmp_path: Path):
    out = _play(tmp_path, NODE, [{"ansible.builtin.copy": {
        "dest": str(tmp_path / "out.json"),
        "content": "{{ {'units': k8s_node_units, 'binaries': k8s_node_binaries,"
                   " 'unit': lookup('ansible.builtin.template', 'cf-sim-dra-driver.service.j2')} | to_json }}"}}])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    got = json.loads((tmp_path / "out.json").read_text())
    assert "cf-sim-dra-driver" in got["units"] and "cf-sim-gpu-plugin" not in got["units"]
    assert "cf-sim-dra-driver" in got["binaries"] and "cf-sim-gpu-plugin" not in got["binaries"]
    exec_start = next(ln for ln in got["unit"].splitlines() if ln.startswith("ExecStart="))
    assert shlex.split(exec_start.removeprefix("ExecStart=")) == [
        "/usr/local/bin/cf-sim-dra-driver", "--driver=gpu.nvidia.com", "--node-name=su01-r01-gpu01", "--count=2",
        "--product=NVIDIA H200-SXM5-141GB (SIMULATED)", "--kubeconfig=/etc/kubernetes/kubelet.conf"]
    assert "SIMULATED" in got["unit"].split("[Unit]")[0]


def test_a_hostile_product_or_driver_stops_the_role_at_its_checks(tmp_path: Path):
    # the role itself: its argument specs, then its first task (the checks); what follows installs packages
    tasks = [{"ansible.builtin.include_role": {"name": str(ROLE)}}]
    bad = {**NODE, "k8s_node_install_only": False, "k8s_node_ip": "198.18.80.16", "k8s_node_pod_cidr": "198.18.64.0/24",
           "k8s_node_cluster_pod_cidr": "198.18.64.0/18", "k8s_node_service_cidr": "198.18.48.0/24",
           "k8s_node_dns_ip": "198.18.48.10", "k8s_node_overlay_mac": "02:cf:c6:12:40:00",
           "k8s_node_api_server": "https://198.18.80.79:8443", "k8s_node_sandbox_image": "198.18.80.76:5000/p:3.10",
           "k8s_node_registry": {"address": "198.18.80.76:5000", "username": "clusterforge"}}
    for field, value in (("k8s_node_simulated_gpu_product", 'H200" --kubeconfig=/tmp/x'),
                         ("k8s_node_simulated_gpu_product", "H200 %n"),
                         ("k8s_node_dra_driver", "gpu.nvidia.com --count=9"),
                         ("k8s_node_simulated_gpu_api", "magic")):
        work = tmp_path / f"{field}-{len(value)}"
        work.mkdir()
        out = _play(work, {**bad, field: value}, tasks)
        assert out.returncode != 0
        refused = (f'"assertion": "{field} is match' in out.stdout  # the checks, failing on this field
                   or f"value of {field} must be one of" in out.stdout)  # the argument specs
        assert refused, out.stdout[-3000:]
        assert "Install containerd" not in out.stdout


# `systemctl show --property=Id --property=LoadState --property=ActiveState` of the plugin units a node does not run
SHOWN = {"absent": "Id=cf-sim-gpu-plugin.service\nLoadState=not-found\nActiveState=inactive\n",
         "installed": "Id=cf-sim-gpu-plugin.service\nLoadState=loaded\nActiveState=active\n",
         # its unit file removed and systemd reloaded, its process still running: still found
         "orphaned": "Id=cf-sim-gpu-plugin.service\nLoadState=not-found\nActiveState=active\n"}


def test_a_node_moved_to_dra_retires_the_device_plugin_it_finds_and_only_that(tmp_path: Path):
    """What the role stops and removes on a node of each API, read from the systemctl states it is given: the other
    API's plugin only where the host has it, its unit, enablement link, sockets and CDI file; both plugins on a node
    without simulated GPUs (a real server), where neither is ever found."""
    def show(name: str, api: str, shown: str) -> dict[str, object]:
        return {"ansible.builtin.copy": {"dest": str(tmp_path / f"{name}.json"), "content": (
            "{{ {'retired': k8s_node_sim_plugins_retired, 'found': k8s_node_sim_plugins_found,"
            " 'paths': k8s_node_sim_plugin_paths} | to_json }}")},
            "vars": {"k8s_node_simulated_gpu_api": api, "k8s_node_sim_unit_states": {"stdout": shown}}}

    back = "Id=cf-sim-dra-driver.service\nLoadState=loaded\nActiveState=inactive\n"
    tasks = [show(name, "dra", text) for name, text in SHOWN.items()] + [show("back", "device-plugin", back)]
    # the API in each task's vars (extra vars would override them)
    out = _play(tmp_path, {k: v for k, v in NODE.items() if k != "k8s_node_simulated_gpu_api"}, tasks)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    got = {name: json.loads((tmp_path / f"{name}.json").read_text()) for name in [*SHOWN, "back"]}
    assert got["absent"] == {"retired": ["cf-sim-gpu-plugin"], "found": [], "paths": []}
    for name in ("installed", "orphaned"):
        assert got[name]["found"] == ["cf-sim-gpu-plugin"]
        assert got[name]["paths"] == ["/etc/systemd/system/cf-sim-gpu-plugin.service",
                                      "/etc/systemd/system/multi-user.target.wants/cf-sim-gpu-plugin.service",
                                      "/var/lib/kubelet/device-plugins/cf-sim-gpu.sock"]
    assert got["back"]["retired"] == ["cf-sim-dra-driver"] and got["back"]["paths"] == [
        "/etc/systemd/system/cf-sim-dra-driver.service",
        "/etc/systemd/system/multi-user.target.wants/cf-sim-dra-driver.service",
        "/var/lib/kubelet/plugins_registry/gpu.nvidia.com-reg.sock", "/var/lib/kubelet/plugins/gpu.nvidia.com/dra.sock",
        "/var/run/cdi/clusterforge.io-sim-gpu.json"]
