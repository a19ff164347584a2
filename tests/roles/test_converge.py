"""The site playbook converges on lab hosts, a second run changes nothing, and the
hosts then carry what the roles promise (checked over SSH with testinfra)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from roles_lab import LabInventory, lab_inventory_from_env, servers_of

from clusterforge.provision import ProvisionResult, run_site

pytestmark = [pytest.mark.lab, pytest.mark.slow]

# Lab hosts reach only Debian's mirror; playbooks/vars/lab.yml holds what that implies.
LAB_EXTRAVARS = {"cf_lab": True}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "lab_host" in metafunc.fixturenames:
        inventory = lab_inventory_from_env()
        hosts = list(inventory.servers) if inventory else _shared_lab_servers()
        metafunc.parametrize("lab_host", hosts)


def _shared_lab_servers() -> list[str]:
    """Servers of inventory/lab.yaml (the shared lab), from the plan: no lab needed to collect."""
    from clusterforge.loading import load_and_plan

    _, plan, _ = load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")
    return sorted(d.name for d in plan.devices if d.kind == "server")


@pytest.fixture(scope="module")
def converge(lab_inventory: LabInventory, tmp_path_factory: pytest.TempPathFactory,
             request: pytest.FixtureRequest) -> dict[str, ProvisionResult]:
    if lab_inventory_from_env() is None:  # the shared lab: its converge runs once per session
        shared = request.getfixturevalue("lab_converged")
        return {"first": shared.first, "second": shared.second}
    private_data_dir = tmp_path_factory.mktemp("ansible-runner")
    runs = {}
    for name in ("first", "second"):
        runs[name] = run_site(
            lab_inventory.inventory,
            private_data_dir,
            extravars=LAB_EXTRAVARS,
            ssh_config=lab_inventory.ssh_config,
        )
        if not runs[name].ok:
            break
    return runs


@pytest.fixture(scope="module")
def converged(converge: dict[str, ProvisionResult]) -> None:
    if not converge["first"].ok:
        pytest.fail(f"the site playbook failed: {converge['first'].failed_hosts or converge['first'].status}")


def _host_vars(inventory: LabInventory, host: str) -> dict[str, Any]:
    shown = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-inventory"), "-i", str(inventory.inventory), "--host", host],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(shown.stdout)


@pytest.fixture
def host(lab_inventory: LabInventory, lab_host: str, converged: None):
    testinfra = pytest.importorskip("testinfra")
    # testinfra's ansible backend calls ansible-inventory from PATH.
    venv_bin = str(Path(sys.executable).parent)
    if venv_bin not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([venv_bin, os.environ.get("PATH", "")])
    kwargs = {"ssh_config": str(lab_inventory.ssh_config)} if lab_inventory.ssh_config else {}
    return testinfra.get_host(f"ansible://{lab_host}?ansible_inventory={lab_inventory.inventory}", **kwargs)


@pytest.fixture
def host_vars(lab_inventory: LabInventory, lab_host: str) -> dict[str, Any]:
    return _host_vars(lab_inventory, lab_host)


def test_first_run_reaches_every_server(converge: dict[str, ProvisionResult], lab_inventory: LabInventory) -> None:
    first = converge["first"]
    expected = sorted({*lab_inventory.servers, *servers_of(lab_inventory.inventory, "storage_servers")})
    assert (first.unreachable_hosts, sorted(first.stats)) == ([], expected)


def test_first_run_fails_on_no_host(converge: dict[str, ProvisionResult]) -> None:
    assert converge["first"].failed_hosts == {}


def test_second_run_changes_nothing(converge: dict[str, ProvisionResult], converged: None) -> None:
    second = converge["second"]
    assert second.failed_hosts == {}
    assert {host: n for host, n in second.changed_per_host.items() if n} == {}


def test_timesyncd_drop_in_names_the_planned_time_servers(host, host_vars: dict[str, Any]) -> None:
    """The drop-in holds exactly the bytes the bare-metal installers write, or is absent when none is declared."""
    servers = host_vars.get("cf_time_servers", [])
    drop_in = host.file("/etc/systemd/timesyncd.conf.d/50-clusterforge.conf")
    if not servers:
        assert not drop_in.exists
        return
    assert (drop_in.content_string, drop_in.mode, drop_in.user) == (f"[Time]\nNTP={' '.join(servers)}\n", 0o644, "root")


def test_timesyncd_is_enabled(host) -> None:
    assert host.run("systemctl is-enabled systemd-timesyncd").stdout.strip() == "enabled"


def test_nouveau_is_blacklisted(host) -> None:
    conf = host.file("/etc/modprobe.d/blacklist-nouveau.conf")
    assert conf.contains("^blacklist nouveau$") and conf.contains("^options nouveau modeset=0$")


def test_nvidia_driver_userland_is_the_pinned_version(host, host_vars: dict[str, Any]) -> None:
    assert host.package("nvidia-smi").version.startswith(host_vars["cf_software"]["nvidia_driver_version"] + "-")


def test_nvidia_driver_packages_are_held(host) -> None:
    held = host.check_output("dpkg --get-selections nvidia-smi libnvidia-ml1").split()
    assert held == ["nvidia-smi", "hold", "libnvidia-ml1:amd64", "hold"]


def test_nvcc_reports_the_planned_cuda_release(host, host_vars: dict[str, Any]) -> None:
    version = host.check_output("bash -lc 'nvcc --version'")
    assert f"release {host_vars['cf_software']['cuda_version']}," in version


def test_tier_mount_units_are_enabled(host, host_vars: dict[str, Any]) -> None:
    paths = [mount["path"] for mount in host_vars.get("cf_storage", {}).get("mounts", [])]
    units = [host.check_output(f"systemd-escape --path --suffix=mount {path}") for path in paths]
    assert {unit: host.service(unit).is_enabled for unit in units} == {unit: True for unit in units}


def test_tiers_are_mounted_from_the_storage_servers(host, host_vars: dict[str, Any]) -> None:
    storage = host_vars.get("cf_storage", {})
    fstype = {"glusterfs": "fuse.glusterfs"}.get(storage.get("kind"), storage.get("kind"))
    fields = [line.split() for line in host.file("/proc/self/mounts").content_string.splitlines()]
    live = {f[1]: (f[0], f[2]) for f in fields if len(f) > 2}
    mounts = storage.get("mounts", [])
    assert {m["path"]: live.get(m["path"]) for m in mounts} == {m["path"]: (m["source"], fstype) for m in mounts}


def test_node_exporter_serves_network_metrics(host) -> None:
    metrics = host.check_output(
        "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:9100/metrics').read().decode())\""
    )
    assert "node_network_receive_bytes_total" in metrics


def test_the_simulated_dcgm_exporter_serves_every_planned_gpu_marked_simulated(host, host_vars: dict[str, Any]) -> None:
    """Lab hosts have no GPU: site.yml runs roles/dcgm_exporter's SIMULATED exporter on dcgm-exporter's port."""
    service = host.service("cf-sim-dcgm-exporter")
    assert service.is_enabled and service.is_running
    metrics = host.check_output(
        "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:9400/metrics').read().decode())\""
    )
    temps = [line for line in metrics.splitlines() if line.startswith("DCGM_FI_DEV_GPU_TEMP{")]
    assert len(temps) == host_vars["cf_gpu_count"] and all('simulated="true"' in line for line in temps), temps
    assert "# HELP DCGM_FI_DEV_GPU_TEMP SIMULATED" in metrics
