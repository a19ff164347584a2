"""The rendered inventory as the checks read it: hosts by group and Ansible-like variable precedence."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clusterforge.verify.hosts._inventory import InventoryError, load_inventory

INVENTORY = {
    "all": {
        "vars": {"cf_cluster": "t", "level": "all-inline"},
        "children": {
            "servers": {"hosts": {"n1": None, "n2": {"ansible_user": "ops"}}},
            "su01": {"hosts": {"n1": None}, "children": {"su01_r01": {"hosts": {"n2": None}}}},
        },
    }
}


@pytest.fixture
def inventory_dir(tmp_path: Path) -> Path:
    ans = tmp_path / "ansible"
    (ans / "host_vars").mkdir(parents=True)
    (ans / "group_vars").mkdir()
    (ans / "inventory.yml").write_text(yaml.safe_dump(INVENTORY))
    (ans / "group_vars" / "all.yml").write_text("level: all-file\nonly_all: 1\n")
    (ans / "group_vars" / "su01.yml").write_text("level: su01\n")
    (ans / "group_vars" / "su01_r01.yml").write_text("level: su01_r01\n")
    (ans / "host_vars" / "n1.yml").write_text("level: host\ncf_gpu_count: 2\n")
    return tmp_path


def test_group_hosts_include_children(inventory_dir):
    inv = load_inventory(inventory_dir)
    assert inv.group_hosts("servers") == ["n1", "n2"]
    assert inv.group_hosts("su01") == ["n1", "n2"]
    assert set(inv.all_hosts()) == {"n1", "n2"}


def test_host_vars_file_wins(inventory_dir):
    v = load_inventory(inventory_dir).host_vars("n1")
    assert v["level"] == "host" and v["cf_gpu_count"] == 2 and v["only_all"] == 1 and v["cf_cluster"] == "t"


def test_inner_group_wins_over_outer(inventory_dir):
    v = load_inventory(inventory_dir).host_vars("n2")
    assert v["level"] == "su01_r01"
    assert v["ansible_user"] == "ops"


def test_unknown_host_is_an_error(inventory_dir):
    with pytest.raises(InventoryError):
        load_inventory(inventory_dir).host_vars("n9")


def test_missing_inventory_is_an_error(tmp_path):
    with pytest.raises(InventoryError, match="clusterforge render"):
        load_inventory(tmp_path)


def test_rendered_lab_inventory(rendered_lab):
    inv = load_inventory(rendered_lab)
    servers = inv.group_hosts("servers")
    assert servers == ["su01-r01-gpu01", "su01-r01-gpu02", "su01-r02-gpu01", "su01-r02-gpu02"]
    v = inv.host_vars(servers[0])
    assert v["cf_cluster"] == "cfverify" and v["cf_gpu_count"] == 2
    assert [i["name"] for i in v["cf_interfaces"]] == ["mgmt0", "bond0", "rail0", "rail1"]
