"""The Ansible inventory describes switches for network automation: each switch's NOS collection."""

from __future__ import annotations

from pathlib import Path

import yaml

from clusterforge.loading import load_and_plan
from clusterforge.render.ansible_inventory import render_ansible

REPO = Path(__file__).resolve().parents[2]


def _switch_hosts(name: str) -> dict:
    spec, plan, _ = load_and_plan(REPO / "inventory" / f"{name}.yaml")
    inventory = yaml.safe_load(render_ansible(plan)["ansible/inventory.yml"])
    return inventory["all"]["children"]["switches"]


def test_switches_carry_their_network_os_and_no_local_connection():
    switches = _switch_hosts("lab")
    assert "vars" not in switches  # no group-wide ansible_connection: local
    hosts = switches["hosts"]
    by_plane = {h["cf_plane"]: (h.get("ansible_network_os"), h.get("ansible_connection")) for h in hosts.values()}
    # lab: data and storage planes run SONiC, management and oob Cumulus (NVUE)
    assert by_plane == {
        "data": ("dellemc.enterprise_sonic.sonic", "ansible.netcommon.network_cli"),
        "storage": ("dellemc.enterprise_sonic.sonic", "ansible.netcommon.network_cli"),
        "management": ("nvidia.nvue", "ansible.netcommon.httpapi"),
        "oob": ("nvidia.nvue", "ansible.netcommon.httpapi"),
    }


def test_infiniband_switches_get_no_network_os():
    hosts = _switch_hosts("superpod-4su")["hosts"]
    ib = [h for h in hosts.values() if h["cf_plane"] == "data"]
    assert ib and all("ansible_network_os" not in h and "ansible_connection" not in h for h in ib)
