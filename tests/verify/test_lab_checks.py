"""The host checks against real lab hosts over SSH (strict host key checking, the lab's ssh_config).

Every check must be able to fail, so each is shown failing, not only passing:
* network: the lab configures interfaces itself, so the checks pass; then one fact is broken on
  one host (an MTU, an address, a link state), exactly that check fails, and it passes again
  once restored;
* checks of things the roles configure (nouveau, driver, CUDA, mounts, tiers, container runtime) fail on
  a freshly booted host; the ones that can be made true here without the package mirror are
  then made true (the real nouveau_blacklist role, a containerd config, a mount unit) and pass;
* the converged case (every check on hosts the site playbook converged) runs when the session
  provides the ``lab_converged`` fixture (tests/lab_cluster/conftest.py); otherwise it skips.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from clusterforge.verify.hosts._inventory import inventory_file, load_inventory
from clusterforge.verify.runner import VerifyResult, run_checks

pytestmark = pytest.mark.lab

ROOT = Path(__file__).resolve().parents[2]


def ssh(cluster, host: str, command: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ssh", "-F", str(cluster.ssh_config), host, command], capture_output=True, text=True,
                          timeout=60, check=check)


def servers(cluster) -> list[str]:
    planned = load_inventory(cluster.inventory_dir).group_hosts("servers")
    return [h for h in planned if h in set(cluster.hosts)]


def outcomes(result: VerifyResult) -> dict[str, str]:
    return {r["test"]: r["outcome"] for r in result.records}


def messages(result: VerifyResult) -> dict[str, str]:
    return {r["test"]: r["message"] for r in result.records}


def check(cluster, host: str | None, *concerns: str) -> VerifyResult:
    return run_checks(Path(cluster.inventory_dir), "lab", [host] if host else None, Path(cluster.ssh_config), None,
                      concerns=list(concerns))


def failures(result: VerifyResult) -> list[str]:
    return [f"{h} {f['test']}: {f['message']}" for h, hr in result.per_host.items() for f in hr.failures]


# --- network: passes where the lab configured it, fails where it is broken --------------------------

def test_network_checks_pass_on_every_lab_server(lab_cluster):
    result = check(lab_cluster, None, "network")
    storage = load_inventory(lab_cluster.inventory_dir).group_hosts("storage_servers")
    assert storage  # the default host set is the GPU servers and the storage servers
    assert set(result.per_host) == {*servers(lab_cluster), *storage}
    assert result.failed == 0, failures(result)
    assert all(hr.passed > 0 for hr in result.per_host.values())


def test_network_check_reaches_hosts_through_checked_host_keys(lab_cluster):
    """The lab's ssh_config pins host keys (StrictHostKeyChecking yes); the checks use it, not a bypass."""
    text = Path(lab_cluster.ssh_config).read_text()
    assert "StrictHostKeyChecking yes" in text and "UserKnownHostsFile" in text
    host = servers(lab_cluster)[0]
    result = check(lab_cluster, host, "network")
    assert result.per_host[host].passed > 0 and result.failed == 0, failures(result)


@pytest.fixture
def broken_mtu(lab_cluster):
    host = servers(lab_cluster)[0]
    ssh(lab_cluster, host, "ip link set dev rail0 mtu 1500")
    yield host
    ssh(lab_cluster, host, "ip link set dev rail0 mtu 9000")


def test_mtu_check_fails_for_the_broken_interface_only(lab_cluster, broken_mtu):
    result = check(lab_cluster, broken_mtu, "network")
    out, msg = outcomes(result), messages(result)
    assert out[f"network::test_interface_mtu[{broken_mtu}/rail0]"] == "failed"
    assert "1500" in msg[f"network::test_interface_mtu[{broken_mtu}/rail0]"]
    assert "9000" in msg[f"network::test_interface_mtu[{broken_mtu}/rail0]"]
    assert out[f"network::test_interface_mtu[{broken_mtu}/rail1]"] == "passed"
    assert out[f"network::test_interface_mtu[{broken_mtu}/mgmt0]"] == "passed"
    assert result.failed == 1, failures(result)


def test_mtu_check_passes_again_once_restored(lab_cluster, broken_mtu):
    ssh(lab_cluster, broken_mtu, "ip link set dev rail0 mtu 9000")
    result = check(lab_cluster, broken_mtu, "network")
    assert outcomes(result)[f"network::test_interface_mtu[{broken_mtu}/rail0]"] == "passed"
    assert result.failed == 0, failures(result)


@pytest.fixture
def removed_address(lab_cluster):
    host = servers(lab_cluster)[0]
    bond = next(i for i in load_inventory(lab_cluster.inventory_dir).host_vars(host)["cf_interfaces"]
                if i["name"] == "bond0")
    routes = ssh(lab_cluster, host, "ip route show dev bond0 | grep -v 'proto kernel' || true").stdout.splitlines()
    ssh(lab_cluster, host, f"ip addr del {bond['ip']} dev bond0")
    yield host, bond["ip"]
    ssh(lab_cluster, host, f"ip addr replace {bond['ip']} dev bond0")
    for route in routes:  # routes through the address went with it
        ssh(lab_cluster, host, f"ip route replace {route} dev bond0")


def test_address_check_fails_when_the_planned_address_is_gone(lab_cluster, removed_address):
    host, ip = removed_address
    result = check(lab_cluster, host, "network")
    test = f"network::test_interface_address[{host}/bond0]"
    assert outcomes(result)[test] == "failed"
    assert ip in messages(result)[test]
    assert result.failed == 1, failures(result)


@pytest.fixture
def downed_link(lab_cluster):
    host = servers(lab_cluster)[-1]
    routes = ssh(lab_cluster, host, "ip route show dev rail1 | grep -v 'proto kernel' || true").stdout.splitlines()
    ssh(lab_cluster, host, "ip link set dev rail1 down")
    yield host
    ssh(lab_cluster, host, "ip link set dev rail1 up")
    for route in routes:
        ssh(lab_cluster, host, f"ip route replace {route} dev rail1")


def test_link_down_fails_up_and_peer_checks(lab_cluster, downed_link):
    result = check(lab_cluster, downed_link, "network")
    out = outcomes(result)
    assert out[f"network::test_interface_up[{downed_link}/rail1]"] == "failed"
    assert out[f"network::test_data_peer_reachable[{downed_link}/rail1]"] == "failed"
    assert out[f"network::test_interface_up[{downed_link}/rail0]"] == "passed"
    assert result.failed == 2, failures(result)


# --- role-configured checks fail on a freshly booted host -------------------------------------------

FRESH_FAILS = [
    "kernel::test_nouveau_blacklisted[{h}]",
    "kernel::test_nouveau_modeset_disabled[{h}]",
    "driver::test_driver_component_packaged[{h}-nvidia-smi]",
    "driver::test_driver_component_packaged[{h}-nvml]",
    "driver::test_driver_component_packaged[{h}-libcuda]",
    "driver::test_driver_component_at_pinned_version[{h}-nvml]",
    "driver::test_driver_component_held[{h}-nvml]",
    "cuda::test_cuda_profile_script_present[{h}]",
    "cuda::test_cuda_home_holds_nvcc[{h}]",
    "cuda::test_nvcc_release_is_pinned[{h}]",
    "cuda::test_cuda_toolkit_held[{h}]",
    "mounts::test_mount_unit_source[{h}//mnt/hot]",
    "mounts::test_mount_unit_type[{h}//mnt/cold]",
    "mounts::test_mount_unit_declared_options[{h}//mnt/hot]",
    "mounts::test_mount_unit_netdev[{h}//mnt/hot]",
    "mounts::test_mount_unit_enabled[{h}//mnt/cold]",
    "mounts::test_mount_unit_after_storage_network[{h}//mnt/hot]",
    "tiers::test_tier_mounted[{h}//mnt/hot]",
    "tiers::test_tier_type[{h}//mnt/cold]",
    "tiers::test_tier_shared_checksum[{h}//mnt/hot]",
    "tiers::test_tier_throughput[{h}//mnt/cold]",
    "time::test_time_daemon_asks_the_declared_servers[{h}]",  # lab.yaml declares the lab's NTP server
]
# No GPU is passed into a lab container and its kernel is the lab machine's: these must say so (SIMULATED, naming
# the part the lab simulates), never pass.
FRESH_SIMULATED = [
    "driver::test_nvidia_smi_gpu_count[{h}]",
    "driver::test_gpu_persistence_mode_enabled[{h}/gpu0]",
    "driver::test_nvidia_kernel_module_loaded[{h}]",
    "container_runtime::test_nvidia_container_toolkit_installed[{h}]",
    "time::test_time_sync_daemon_active[{h}]",
]


@pytest.fixture(scope="module")
def fresh_result(fresh_lab):
    host = servers(fresh_lab)[0]
    return host, check(fresh_lab, host, "kernel", "driver", "cuda", "mounts", "tiers", "container_runtime", "time")


@pytest.mark.parametrize("test", FRESH_FAILS)
def test_unconfigured_host_fails(fresh_result, test):
    host, result = fresh_result
    assert outcomes(result).get(test.format(h=host)) == "failed", messages(result).get(test.format(h=host))


@pytest.mark.parametrize("test", FRESH_SIMULATED)
def test_unconfigured_container_says_simulated(fresh_result, test):
    host, result = fresh_result
    assert outcomes(result).get(test.format(h=host)) == "simulated"
    assert messages(result)[test.format(h=host)].startswith("SIMULATED ")
    assert any(s["test"] == test.format(h=host) and s["simulated"] for s in result.per_host[host].simulations)


def test_clock_offset_check_runs_on_lab_hosts(fresh_result):
    host, result = fresh_result
    assert outcomes(result)[f"time::test_clock_offset_within_limit[{host}]"] == "passed"


# --- and pass once the fact is made true ------------------------------------------------------------

def test_nouveau_checks_pass_after_the_nouveau_role(fresh_lab):
    """The real nouveau_blacklist role, run over SSH by ansible-playbook; no package mirror needed."""
    host = servers(fresh_lab)[1]
    if not (ROOT / "playbooks" / "site.yml").is_file():
        pytest.skip("playbooks/site.yml is not in this checkout")
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "playbooks" / "ansible.cfg")}
    play = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory_file(fresh_lab.inventory_dir)),
         str(ROOT / "playbooks" / "site.yml"), "--tags", "nouveau", "-l", host, "-e", "cf_lab=true",
         "--ssh-common-args", f"-F {shlex.quote(str(fresh_lab.ssh_config))}"],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )  # fmt: skip
    assert play.returncode == 0, play.stdout[-3000:]
    result = check(fresh_lab, host, "kernel")
    out = outcomes(result)
    assert out[f"kernel::test_nouveau_blacklisted[{host}]"] == "passed"
    assert out[f"kernel::test_nouveau_modeset_disabled[{host}]"] == "passed"
    assert result.failed == 0, failures(result)


# containerd's v2 config with the nvidia runtime (its parser is tested on the same file in test_facts_parsers.py)
CONTAINERD_WITH_NVIDIA = (Path(__file__).parent / "data" / "containerd-nvidia-v2.toml").read_text()


def test_container_runtime_checks_fail_then_pass(fresh_lab):
    """With the toolkit present (a stand-in nvidia-ctk) the containerd checks apply: they fail without the
    nvidia runtime in the config and pass with it."""
    host = servers(fresh_lab)[1]
    ssh(fresh_lab, host, "printf '#!/bin/sh\\necho stand-in\\n' > /usr/local/bin/nvidia-ctk && "
                         "chmod +x /usr/local/bin/nvidia-ctk")
    try:
        before = outcomes(check(fresh_lab, host, "container_runtime"))
        assert before[f"container_runtime::test_nvidia_container_toolkit_installed[{host}]"] == "passed"
        assert before[f"container_runtime::test_containerd_has_nvidia_runtime[{host}]"] == "failed"
        assert before[f"container_runtime::test_containerd_nvidia_runtime_binary[{host}]"] == "failed"
        ssh(fresh_lab, host, f"mkdir -p /etc/containerd && printf %s {shlex.quote(CONTAINERD_WITH_NVIDIA)} "
                             "> /etc/containerd/config.toml")
        after = check(fresh_lab, host, "container_runtime")
        assert outcomes(after)[f"container_runtime::test_containerd_has_nvidia_runtime[{host}]"] == "passed"
        assert after.failed == 0, failures(after)
    finally:
        ssh(fresh_lab, host, "rm -f /usr/local/bin/nvidia-ctk /etc/containerd/config.toml", check=False)


def _mount_unit(source: str, path: str, options: str) -> str:
    return (f"[Unit]\nDescription=test tier\nAfter=parallel-fs-storage-network.service\n"
            "Requires=parallel-fs-storage-network.service\n"
            f"[Mount]\nWhat={source}\nWhere={path}\nType=nfs\nOptions={options}\n"
            "[Install]\nWantedBy=remote-fs.target\n")


def test_mount_unit_checks_fail_on_a_missing_netdev_then_pass(fresh_lab):
    host = servers(fresh_lab)[1]
    mounts = load_inventory(fresh_lab.inventory_dir).host_vars(host)["cf_storage"]["mounts"]
    units = {m["path"]: ssh(fresh_lab, host, f"systemd-escape --path --suffix=mount {m['path']}").stdout.strip()
             for m in mounts}

    def install(with_netdev: bool) -> None:
        for m in mounts:
            options = m["options"] + (",_netdev" if with_netdev else "")
            text = _mount_unit(m["source"], m["path"], options)
            ssh(fresh_lab, host, f"printf %s {shlex.quote(text)} > /etc/systemd/system/{units[m['path']]}")
        ssh(fresh_lab, host, "systemctl daemon-reload && systemctl enable " + " ".join(units.values()))

    try:
        install(with_netdev=False)
        before = check(fresh_lab, host, "mounts")
        bad = sorted(t for t, o in outcomes(before).items() if o == "failed")
        assert bad == sorted(f"mounts::test_mount_unit_netdev[{host}/{m['path']}]" for m in mounts), bad
        install(with_netdev=True)
        after = check(fresh_lab, host, "mounts")
        assert after.failed == 0, failures(after)
        assert after.per_host[host].passed == 6 * len(mounts)
    finally:
        ssh(fresh_lab, host, f"systemctl disable {' '.join(units.values())}; "
                             f"cd /etc/systemd/system && rm -f {' '.join(units.values())}; systemctl daemon-reload",
            check=False)


# --- the converged lab ------------------------------------------------------------------------------

def test_converged_lab_passes_every_check(request):
    """After the site playbook's converge, no check fails (lab limits show up as SIMULATED or skipped, said why)."""
    try:
        converged = request.getfixturevalue("lab_converged")
    except pytest.FixtureLookupError:
        pytest.skip("no lab_converged fixture in this session (the site playbook's converge, "
                    "tests/lab_cluster/conftest.py)")
    result = run_checks(Path(converged.inventory_dir), "lab", None, Path(converged.ssh_config), None)
    assert result.passed > 0
    assert result.failed == 0 and not result.errors, failures(result) + result.errors
