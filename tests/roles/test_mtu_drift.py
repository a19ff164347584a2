"""A RoCE interface off its planned MTU on a converged lab host is drift, and the site playbook sets it back.

The lab's GPU servers have no RDMA devices, so roce_host runs only its MTU tasks there (roles/roce_host/tasks/
mtu.yml); before they were moved out of the RDMA gate, an MTU changed by hand on a lab host was invisible to
`clusterforge drift`. The site playbook in check mode (what drift runs; tag `roce` here, to keep it short) must
name the host and the reporting task and change nothing; a real run on that host sets the MTU back; the next
check finds nothing. The shared converged lab (tests/conftest.py lab_converged) is left as it was found.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

pytestmark = [pytest.mark.lab, pytest.mark.slow]

LAB_EXTRAVARS = {"cf_lab": True}
REPORT_TASK = "Report each RoCE interface not at the planned MTU (check mode)."  # roles/roce_host/tasks/mtu.yml


def _ssh(lab_cluster, host: str, command: str) -> str:
    done = subprocess.run(["ssh", "-F", str(lab_cluster.ssh_config), "-o", "BatchMode=yes", host, command],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{host}: {command!r} exited {done.returncode}: {done.stderr.strip()}"
    return done.stdout.strip()


def _mtu(lab_cluster, host: str, interface: str) -> int:
    """The interface's MTU as the host's kernel reports it over netlink (what the role reads)."""
    return int(json.loads(_ssh(lab_cluster, host, f"ip -json link show dev {interface}"))[0]["mtu"])


def test_an_interface_off_its_planned_mtu_is_drift_and_the_site_playbook_sets_it_back(lab_cluster, lab_converged,
                                                                                       tmp_path):
    from clusterforge.provision import run_site

    host = lab_cluster.hosts[0]
    host_vars = yaml.safe_load((lab_cluster.inventory_dir / "ansible" / "host_vars" / f"{host}.yml").read_text())
    roce = host_vars["cf_roce"]
    interface, planned = roce["interfaces"][0], int(roce["mtu"])
    inventory = lab_cluster.inventory_dir / "ansible" / "inventory.yml"

    def site(name: str, check: bool):
        return run_site(inventory, tmp_path / name, limit=host, tags="roce", extravars=LAB_EXTRAVARS,
                        ssh_config=lab_cluster.ssh_config, check=check)

    assert _mtu(lab_cluster, host, interface) == planned  # the converged state
    wrong = 1500 if planned != 1500 else 1400
    _ssh(lab_cluster, host, f"ip link set dev {interface} mtu {wrong}")
    try:
        checked = site("check", check=True)
        assert checked.ok, checked.failed_hosts
        assert [task for task, _ in checked.changes.get(host, [])] == [REPORT_TASK], checked.changes
        assert _mtu(lab_cluster, host, interface) == wrong  # check mode changed nothing

        fixed = site("fix", check=False)
        assert fixed.ok and fixed.changed_per_host.get(host, 0) >= 1, (fixed.failed_hosts, fixed.changed_per_host)
        assert _mtu(lab_cluster, host, interface) == planned

        again = site("again", check=True)
        assert again.ok and not again.changes.get(host), again.changes
    finally:
        _ssh(lab_cluster, host, f"ip link set dev {interface} mtu {planned}")
