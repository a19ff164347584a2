"""A GB200 NVL72 SU (8 racks) plans as whole racks: compute trays are the hosts at their U positions,
NVLink switch trays and power shelves sit in the rack's power, weight and elevation, and each rack is
one planned NVLink domain of 72 GPUs."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from clusterforge.loading import load_and_plan
from clusterforge.plan.topology import LABEL_PREFIX
from clusterforge.render.report import render_report

REPO = Path(__file__).resolve().parents[2]


@cache
def planned():
    spec, plan, _ = load_and_plan(REPO / "inventory" / "gb200-nvl72-su.yaml")
    return spec, plan


def test_every_rack_is_one_nvlink_domain_of_72_gpus():
    _, plan = planned()
    assert len(plan.nvlink_domains) == 8
    hosts = {d.name: d for d in plan.devices if d.kind == "server"}
    for domain in plan.nvlink_domains:
        assert domain.gpus == 72 and len(domain.members) == 18 and len(domain.switch_trays) == 9
        assert {hosts[m].rack for m in domain.members} == {domain.rack}
        assert domain.partitions[0].members == domain.members
    assert sorted(m for d in plan.nvlink_domains for m in d.members) == sorted(hosts)


def test_trays_sit_at_the_layouts_u_positions():
    spec, plan = planned()
    system = spec.catalog.rack_systems["gb200-nvl72"]
    trays = sorted(d.ru for d in plan.devices if d.rack == "su01-r03" and d.kind == "server")
    assert tuple(trays) == system.trays("compute")
    switch_u = sorted(t.ru for t in plan.rack_trays if t.rack == "su01-r03" and t.kind == "nvlink-switch")
    assert tuple(switch_u) == system.trays("nvlink-switch")
    shelves = [t for t in plan.rack_trays if t.rack == "su01-r03" and t.kind == "power-shelf"]
    assert len(shelves) == 8


def test_rack_power_and_weight_count_the_trays_that_are_not_hosts():
    spec, plan = planned()
    tray = spec.catalog.servers["gb200-nvl72-tray"]
    system = spec.catalog.rack_systems["gb200-nvl72"]
    rack = next(r for r in plan.racks if r.name == "su01-r01")
    tor_w = sum(d.power_w for d in plan.devices if d.rack == "su01-r01" and d.kind != "server")
    assert rack.power_w == 18 * tray.max_draw_w + 9 * system.nvlink_switch_tray.max_draw_w + tor_w
    trays_kg = sum(t.weight_kg for t in plan.rack_trays if t.rack == "su01-r01")
    assert rack.weight_kg > 18 * tray.weight_kg + trays_kg
    assert rack.cooling == "liquid"


def test_compute_trays_get_addresses_and_bmcs():
    _, plan = planned()
    tray = plan.device("su01-r01-gpu01")
    planes = {i.plane for i in tray.interfaces}
    assert {"data", "storage", "management", "oob"} <= planes
    assert [i.rail for i in tray.interfaces if i.plane == "data"] == [0, 1, 2, 3]


def test_elevation_shows_nvlink_switch_trays_and_power_shelves(tmp_path: Path):
    _, plan = planned()
    files = render_report(plan)
    svg = next(text for name, text in files.items() if name.endswith("su01-r01.svg"))
    assert "su01-r01-nvsw09" in svg and "su01-r01-psh08" in svg and "su01-r01-gpu18" in svg


def test_plan_json_carries_the_domains():
    _, plan = planned()
    data = plan.to_dict()
    assert [d["name"] for d in data["nvlink_domains"]][:2] == ["su01-r01-nvl72", "su01-r02-nvl72"]
    assert len(data["rack_trays"]) == 8 * 17


def test_a_gb300_nvl72_su_plans_with_its_own_shelves_and_peak():
    """GB300 racks: 10 shelves N+N (165 kW usable) against the 140 kW peak; the same domains. Its ~135 kW
    racks need the facility's headroom at 5 % and 1.8 t racks (the GB200 example's 15 % / 1.6 t refuse them)."""
    from clusterforge.model import ClusterSpec
    from clusterforge.plan import plan_cluster

    spec, _ = planned()
    data = spec.model_dump()
    data["scalable_units"][0].update(server_model="gb300-nvl72-tray", rack_system="gb300-nvl72")
    data["site"]["facility"].update(headroom=0.05, rack_max_weight_kg=1800)
    plan = plan_cluster(ClusterSpec.model_validate(data))
    assert len(plan.nvlink_domains) == 8 and {d.gpus for d in plan.nvlink_domains} == {72}
    assert sum(1 for t in plan.rack_trays if t.rack == "su01-r01" and t.kind == "power-shelf") == 10


def test_an_su_of_servers_may_declare_nvlink_domains(tmp_path: Path):
    """`nvlink_domain_nodes: 2` on the lab's SU (two racks of two servers): each rack is one declared domain of
    two servers, in the plan, the Slurm blocks and the Kubernetes labels; without it there is none."""
    import shutil

    shutil.copytree(REPO / "inventory" / "catalog", tmp_path / "catalog")
    text = (REPO / "inventory" / "lab.yaml").read_text()
    assert text.count("    racks: 2\n") == 1
    path = tmp_path / "lab.yaml"
    path.write_text(text.replace("    racks: 2\n", "    racks: 2\n    nvlink_domain_nodes: 2\n"))
    _, plan, _ = load_and_plan(path)
    assert [(d.name, d.members, d.gpus, d.system, d.switch_trays) for d in plan.nvlink_domains] == [
        ("su01-r01-nvd01", ("su01-r01-gpu01", "su01-r01-gpu02"), 4, "declared", ()),
        ("su01-r02-nvd01", ("su01-r02-gpu01", "su01-r02-gpu02"), 4, "declared", ())]
    assert plan.scheduler is not None
    assert [(b.name, b.nodes) for b in plan.scheduler.blocks] == [
        ("su01-r01-nvd01", ("su01-r01-gpu01", "su01-r01-gpu02")),
        ("su01-r02-nvd01", ("su01-r02-gpu01", "su01-r02-gpu02"))]
    labels = {node: dict(pairs) for node, pairs in plan.scheduler.node_labels}
    pairs = {n: (v[LABEL_PREFIX + "nvlink-domain"], v[LABEL_PREFIX + "nvlink-gpus"]) for n, v in labels.items()}
    assert pairs == {
        "su01-r01-gpu01": ("su01-r01-nvd01", "4"), "su01-r01-gpu02": ("su01-r01-nvd01", "4"),
        "su01-r02-gpu01": ("su01-r02-nvd01", "4"), "su01-r02-gpu02": ("su01-r02-nvd01", "4")}
    _, lab, _ = load_and_plan(REPO / "inventory" / "lab.yaml")
    assert lab.nvlink_domains == ()
