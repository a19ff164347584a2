"""The storage checks on the converged shared lab (GlusterFS on its storage server, FUSE mounts on the
GPU servers), each shown failing when the thing it checks is broken on a lab host, and passing again
once restored:

* tiers: unmounted tier; tier mounted without a declared option; a peer that sees another volume at the
  tier's path (the written file does not read back there); a throttled storage link (fio below the
  declared throughput);
* storage server: a brick process killed; glusterd stopped; a volume open to any client;
* mount units: a unit no longer ordered after the storage network.

Uses ``lab_converged`` (tests/conftest.py): the site playbook ran twice on the lab, storage included.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clusterforge.verify.hosts._inventory import load_inventory
from clusterforge.verify.runner import VerifyResult, run_checks

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def ssh(lab, host: str, command: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ssh", "-F", str(lab.ssh_config), host, command], capture_output=True, text=True,
                          timeout=120, check=check)


def check(lab, host: str, *concerns: str) -> VerifyResult:
    return run_checks(Path(lab.inventory_dir), "lab", [host], Path(lab.ssh_config), None, concerns=list(concerns))


def outcomes(result: VerifyResult) -> dict[str, str]:
    return {r["test"]: r["outcome"] for r in result.records}


def messages(result: VerifyResult) -> dict[str, str]:
    return {r["test"]: r["message"] for r in result.records}


def failed(result: VerifyResult) -> list[str]:
    return sorted(r["test"] for r in result.records if r["outcome"] == "failed")


@pytest.fixture(scope="module")
def lab(lab_converged):
    return lab_converged


@pytest.fixture(scope="module")
def inventory(lab):
    return load_inventory(lab.inventory_dir)


@pytest.fixture(scope="module")
def gpu_servers(inventory) -> list[str]:
    return inventory.group_hosts("servers")


@pytest.fixture(scope="module")
def storage_server(inventory) -> str:
    return inventory.group_hosts("storage_servers")[0]


def _mount(inventory, host: str, tier: str) -> dict:
    return next(m for m in inventory.host_vars(host)["cf_storage"]["mounts"] if m["tier"] == tier)


def _restore_tier(lab, host: str, path: str) -> None:
    unit = ssh(lab, host, f"systemd-escape --path --suffix=mount {path}").stdout.strip()
    ssh(lab, host, f"umount -l {path} 2>/dev/null; systemctl reset-failed {unit}; systemctl restart {unit}")


def test_every_storage_check_passes_on_the_converged_lab(lab, gpu_servers, storage_server):
    result = run_checks(Path(lab.inventory_dir), "lab", None, Path(lab.ssh_config), None,
                        concerns=["tiers", "storage"])
    assert set(result.per_host) == {*gpu_servers, storage_server}
    assert result.failed == 0 and not result.errors, result.failures
    assert result.per_host[storage_server].passed >= 1 + 4 * 2  # glusterd + 4 checks x 2 volumes
    figures = [r["figures"] for r in result.records if r["test"].startswith("tiers::test_tier_throughput")]
    assert len(figures) == 2 * len(gpu_servers) and all(f["throughput_mbps"] > 0 for f in figures)


def test_an_unmounted_tier_fails_its_checks(lab, inventory, gpu_servers):
    host = gpu_servers[0]
    path = _mount(inventory, host, "hot")["path"]
    ssh(lab, host, f"umount {path}")
    try:
        result = check(lab, host, "tiers")
        hot = [t for t in failed(result) if f"[{host}/{path}]" in t]
        assert sorted(t.split("::")[1].split("[")[0] for t in hot) == [
            "test_tier_mounted", "test_tier_options", "test_tier_shared_checksum", "test_tier_throughput",
            "test_tier_type"]
        assert f"{path} is not mounted" in messages(result)[f"tiers::test_tier_mounted[{host}/{path}]"]
        assert len(failed(result)) == 5  # the cold tier still passes
    finally:
        _restore_tier(lab, host, path)
    assert check(lab, host, "tiers").failed == 0


def test_a_missing_declared_option_fails_the_options_check_only(lab, inventory, gpu_servers):
    host = gpu_servers[1]
    m = _mount(inventory, host, "hot")
    assert "noatime" in m["options"].split(",")
    ssh(lab, host, f"umount {m['path']} && mount -t glusterfs -o rw {m['source']} {m['path']}")
    try:
        result = check(lab, host, "tiers")
        test = f"tiers::test_tier_options[{host}/{m['path']}]"
        assert failed(result) == [test]
        assert "without declared noatime" in messages(result)[test]
    finally:
        _restore_tier(lab, host, m["path"])
    assert check(lab, host, "tiers").failed == 0


def test_a_peer_seeing_another_volume_fails_the_shared_checksum(lab, inventory, gpu_servers):
    writer, peer = gpu_servers[0], gpu_servers[1]  # the checks read back on the next server of the inventory
    hot, cold = _mount(inventory, peer, "hot"), _mount(inventory, peer, "cold")
    ssh(lab, peer, f"umount {hot['path']} && mount -t glusterfs -o rw,noatime {cold['source']} {hot['path']}")
    try:
        result = check(lab, writer, "tiers")
        test = f"tiers::test_tier_shared_checksum[{writer}/{hot['path']}]"
        assert failed(result) == [test]
        assert f"not readable on {peer}" in messages(result)[test]
    finally:
        _restore_tier(lab, peer, hot["path"])
    assert check(lab, writer, "tiers").failed == 0


def test_a_throttled_storage_link_fails_the_throughput_smoke(lab, inventory, gpu_servers):
    host = gpu_servers[-1]
    iface = next(i["name"] for i in inventory.host_vars(host)["cf_interfaces"] if i["plane"] == "storage")
    declared = min(m["throughput_mbps"] for m in inventory.host_vars(host)["cf_storage"]["mounts"])
    rate_mbit = int(declared * 8 / 4)  # a quarter of the smallest declared MB/s
    ssh(lab, host, f"tc qdisc replace dev {iface} root tbf rate {rate_mbit}mbit burst 64kb latency 200ms")
    try:
        result = check(lab, host, "tiers")
        assert sorted(t.split("[")[0] for t in failed(result)) == ["tiers::test_tier_throughput"] * 2
        assert all("declared" in messages(result)[t] for t in failed(result))
    finally:
        ssh(lab, host, f"tc qdisc del dev {iface} root", check=False)
    assert check(lab, host, "tiers").failed == 0


def test_a_killed_brick_fails_the_online_check(lab, inventory, storage_server):
    volume = next(v for v in inventory.host_vars(storage_server)["cf_storage"]["volumes"] if v["name"] == "hot")
    brick = volume["bricks"][1]
    pattern = f"--brick-name {brick['path'][:-1]}[{brick['path'][-1]}] "  # [x]: never matches this shell
    ssh(lab, storage_server, f"pkill -f -- '{pattern}'")
    try:
        result = check(lab, storage_server, "storage")
        test = f"storage::test_volume_bricks_online[{storage_server}/hot]"
        assert failed(result) == [test]
        assert brick["path"] in messages(result)[test]
    finally:
        ssh(lab, storage_server, "gluster --mode=script volume start hot force")
    assert check(lab, storage_server, "storage").failed == 0


def test_a_stopped_glusterd_fails_its_check(lab, storage_server):
    ssh(lab, storage_server, "systemctl stop glusterd")
    try:
        result = check(lab, storage_server, "storage")
        assert f"storage::test_glusterd_active[{storage_server}]" in failed(result)
    finally:
        ssh(lab, storage_server, "systemctl start glusterd")
    assert check(lab, storage_server, "storage").failed == 0


def test_a_widened_auth_allow_fails_the_clients_check(lab, inventory, storage_server):
    clients = inventory.host_vars(storage_server)["cf_storage"]["clients"]
    ssh(lab, storage_server, "gluster --mode=script volume set cold auth.allow '*'")
    try:
        result = check(lab, storage_server, "storage")
        test = f"storage::test_volume_allows_only_the_planned_clients[{storage_server}/cold]"
        assert failed(result) == [test]
        assert "allows *" in messages(result)[test]
    finally:
        ssh(lab, storage_server, f"gluster --mode=script volume set cold auth.allow {','.join(clients)}")
    assert check(lab, storage_server, "storage").failed == 0


def test_a_mount_unit_not_ordered_after_the_storage_network_fails(lab, inventory, gpu_servers):
    host = gpu_servers[-1]
    path = _mount(inventory, host, "cold")["path"]
    unit = ssh(lab, host, f"systemd-escape --path --suffix=mount {path}").stdout.strip()
    ssh(lab, host, f"cp /etc/systemd/system/{unit} /root/{unit}.bak && "
                   f"sed -i '/parallel-fs-storage-network/d' /etc/systemd/system/{unit} && systemctl daemon-reload")
    try:
        result = check(lab, host, "mounts")
        test = f"mounts::test_mount_unit_after_storage_network[{host}/{path}]"
        assert failed(result) == [test]
        assert "not ordered after the storage network" in messages(result)[test]
    finally:
        ssh(lab, host, f"mv /root/{unit}.bak /etc/systemd/system/{unit} && systemctl daemon-reload")
    assert check(lab, host, "mounts").failed == 0
