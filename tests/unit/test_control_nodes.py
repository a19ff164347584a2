"""Control/head nodes in the declaration and the plan: racked, powered, addressed without moving any
existing address, in the inventory and the asset list; a count other than 1 or 3 is refused at the field."""

from __future__ import annotations

import shutil
from functools import lru_cache
from pathlib import Path

import pytest

from clusterforge.model import ClusterSpec, load_cluster
from clusterforge.model.control import Control
from clusterforge.plan import Plan, plan_cluster
from clusterforge.render.ansible_inventory import ansible_tree
from clusterforge.vocab import DeviceKind

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "inventory" / "lab.yaml"


@lru_cache(maxsize=1)
def lab() -> tuple[ClusterSpec, Plan]:
    spec, _ = load_cluster(LAB)
    return spec, plan_cluster(spec)


def with_control(nodes: int) -> Plan:
    spec, _ = lab()
    model = "control-1u" if nodes else None
    return plan_cluster(spec.model_copy(update={"control": Control(nodes=nodes, server_model=model)}))


def test_lab_declares_one_control_node() -> None:
    _, plan = lab()
    (control,) = [d for d in plan.devices if d.kind == DeviceKind.CONTROL]
    assert (control.name, control.model, control.rack) == ("ctl-01", "control-1u", "site-control-r01")
    assert control.management_ip and control.psu_feeds == ("A", "B")
    racks = {r.name for r in plan.racks}
    assert "site-control-r01" in racks
    assert any(p.rack == "site-control-r01" and p.load_w == control.power_w for p in plan.pdus)


@pytest.mark.parametrize("nodes", [1, 3])
def test_control_nodes_move_no_existing_address(nodes: int) -> None:
    without = {d.name: d.interfaces for d in with_control(0).devices}
    plan = with_control(nodes)
    controls = [d for d in plan.devices if d.kind == DeviceKind.CONTROL]
    assert len(controls) == nodes
    assert {d.name: d.interfaces for d in plan.devices if d.kind != DeviceKind.CONTROL} == without
    used = [i.ip for d in plan.devices for i in d.interfaces if i.ip]
    assert len(used) == len(set(used)), "an address is given twice"


def test_control_nodes_are_an_inventory_group() -> None:
    _, plan = lab()
    files = ansible_tree(plan)
    assert "host_vars/ctl-01.yml" in files
    assert "control_nodes:\n      hosts:\n        ctl-01: null" in files["inventory.yml"]
    assert "cf_storage" not in files["host_vars/ctl-01.yml"]


def test_bom_counts_the_control_node() -> None:
    _, plan = lab()
    (line,) = [line for line in plan.bom.lines if line.item == "control-1u"]
    assert (line.count, line.total) == (1, 15000.0)


@pytest.mark.parametrize("nodes", [2, 4])
def test_control_count_other_than_one_or_three_is_refused(nodes: int, tmp_path: Path) -> None:
    text = LAB.read_text().replace("  nodes: 1\n  server_model: control-1u", f"  nodes: {nodes}\n"
                                   "  server_model: control-1u")
    assert text != LAB.read_text()
    shutil.copytree(ROOT / "inventory" / "catalog", tmp_path / "catalog")
    path = tmp_path / "lab.yaml"
    path.write_text(text)
    with pytest.raises(Exception) as failure:
        load_cluster(path)
    assert "control" in str(failure.value) and "nodes" in str(failure.value)
