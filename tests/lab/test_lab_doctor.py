"""The doctor on real lab hosts, each finding broken on purpose and then repaired (real SSH, host keys checked).

Lab hosts have no GPU and no RDMA device, so those findings come out as the plan says they
should (planned GPUs missing, planned InfiniBand missing); the rest are broken and fixed here.
"""

from __future__ import annotations

import pytest

from clusterforge.ops.doctor import Expect, SshShell, Status, diagnose

HOST = "srv2"  # management and a jumbo storage bridge
EXPECT = Expect(gpus=2, interfaces={"mgmt0": 1500, "stor0": 9000}, mounts=("/mnt/cf-data",))


@pytest.fixture(scope="module")
def shell(lab) -> SshShell:
    return SshShell(HOST, str(lab.ssh_config))


def _one(shell: SshShell, check: str, expect: Expect = EXPECT):
    found = [f for f in diagnose(shell, expect, only=(check,)) if f.check == check]
    assert found, f"no {check} finding"
    return found[0]


def _sh(shell: SshShell, script: str) -> None:
    res = shell.run(script)
    assert res.ok, res.err


def test_planned_gpus_missing_on_the_bus(shell):
    f = _one(shell, "gpu-visible")
    assert f.status is Status.fail and f.summary == "0 of 2 planned GPUs on the PCI bus"
    assert "PCI bus: 0 NVIDIA GPU(s)" in f.evidence and "reseat" in f.fix
    assert _one(shell, "gpu-visible", Expect()).status is Status.skip  # nothing planned: nothing to miss


def test_nouveau_not_blacklisted_then_blacklisted(shell):
    _sh(shell, "rm -f /etc/modprobe.d/cf-doctor-nouveau.conf")
    f = _one(shell, "nouveau")
    assert f.status is Status.warn and "not blacklisted" in f.summary and "update-initramfs" in f.fix
    _sh(shell, "echo 'blacklist nouveau' > /etc/modprobe.d/cf-doctor-nouveau.conf")
    try:
        assert _one(shell, "nouveau").status is Status.ok
    finally:
        _sh(shell, "rm -f /etc/modprobe.d/cf-doctor-nouveau.conf")


def test_link_down_and_wrong_mtu(shell):
    assert _one(shell, "data-links").status is Status.ok
    _sh(shell, "ip link set stor0 down")
    try:
        f = _one(shell, "data-links")
        assert f.status is Status.fail and "stor0 is down" in f.summary and "stor0: DOWN" in f.evidence
    finally:
        _sh(shell, "ip link set stor0 up")
    _sh(shell, "ip link set stor0 mtu 1500")
    try:
        assert "stor0 MTU 1500 (planned 9000)" in _one(shell, "data-links").summary
    finally:
        _sh(shell, "ip link set stor0 mtu 9000")
    assert _one(shell, "data-links").status is Status.ok


def test_planned_mount_missing_then_mounted(shell):
    f = _one(shell, "mounts")
    assert f.status is Status.fail and f.summary == "not mounted: /mnt/cf-data"
    _sh(shell, "mkdir -p /mnt/cf-data && mount -t tmpfs cf-doctor /mnt/cf-data")
    try:
        f = _one(shell, "mounts")
        assert f.status is Status.ok and "/mnt/cf-data: tmpfs" in f.evidence
    finally:
        _sh(shell, "umount /mnt/cf-data")


def test_nccl_settings_that_hurt(shell):
    assert _one(shell, "nccl-env").status is Status.ok
    _sh(shell, "printf 'NCCL_IB_DISABLE=1\\nNCCL_SOCKET_IFNAME=eth9\\nNCCL_P2P_DISABLE=1\\n' > /etc/nccl.conf")
    try:
        f = _one(shell, "nccl-env", Expect(infiniband=True))
        assert f.status is Status.fail
        assert "NCCL_IB_DISABLE=1" in f.summary and "NCCL_SOCKET_IFNAME=eth9 matches no interface" in f.summary
        assert "NCCL_P2P_DISABLE=1" in f.summary and "NCCL_IB_DISABLE=1 (/etc/nccl.conf)" in f.evidence
        _sh(shell, "echo NCCL_SOCKET_IFNAME=mgmt > /etc/nccl.conf")  # a prefix of mgmt0, as NCCL matches
        assert _one(shell, "nccl-env").status is Status.ok
    finally:
        _sh(shell, "rm -f /etc/nccl.conf")


def test_xid_in_the_kernel_log(shell):
    assert _one(shell, "xid").status is Status.ok
    _sh(shell, "logger -t kernel -p kern.err 'NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.'"
               " && sleep 1")
    f = _one(shell, "xid")
    assert f.status is Status.fail and "codes 79" in f.summary and "PCI:0000:3b:00" in f.summary
    assert "Xid 79: GPU has fallen off the bus" in f.evidence and "power-cycle" in f.fix


def test_planned_rdma_missing(shell):
    f = _one(shell, "ib-links", Expect(infiniband=True))
    assert f.status is Status.fail and "no RDMA" in f.summary
    assert _one(shell, "ib-links").status is Status.skip


def test_unreachable_host_is_one_finding_per_check_not_a_traceback(lab):
    ghost = SshShell("no-such-host", str(lab.ssh_config))
    findings = diagnose(ghost, EXPECT)
    assert [(f.check, f.status) for f in findings] == [("reachable", Status.fail)]
    assert findings[0].summary.startswith("no-such-host unreachable: ")
