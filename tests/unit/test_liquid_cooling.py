"""Liquid cooling as a constraint: heat split by the catalog's fractions, rows' CDUs against their liquid
heat with the declared redundancy, supply temperature and flow; CDUs, manifolds and leak detection in
the BOM; PUE blended by the liquid share."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from clusterforge.model import ClusterSpec, load_cluster
from clusterforge.plan import PlanError, plan_cluster

REPO = Path(__file__).resolve().parents[2]


@cache
def gb200() -> ClusterSpec:
    return load_cluster(REPO / "inventory" / "gb200-nvl72-su.yaml")[0]


def with_loop(**changes) -> ClusterSpec:
    data = gb200().model_dump()
    loop = data["site"]["facility"]["cooling"]["liquid_loop"]
    if changes.pop("no_loop", False):
        data["site"]["facility"]["cooling"]["liquid_loop"] = None
    else:
        loop.update(changes)
    return ClusterSpec.model_validate(data)


def test_each_rack_splits_into_liquid_and_air_by_the_rack_systems_fraction():
    plan = plan_cluster(gb200())
    system = gb200().catalog.rack_systems["gb200-nvl72"]
    heat = {h.rack: h for h in plan.cooling.racks}
    rack = next(r for r in plan.racks if r.name == "su01-r02")
    assert heat["su01-r02"].liquid_w == pytest.approx(rack.power_w * system.liquid_fraction, abs=0.1)
    assert heat["su01-r02"].liquid_w + heat["su01-r02"].air_w == pytest.approx(rack.power_w, abs=0.2)
    network = next(r for r in plan.racks if r.role != "compute")
    assert heat[network.name].liquid_w == 0


def test_the_row_carries_its_liquid_heat_with_one_cdu_spare():
    plan = plan_cluster(gb200())
    (row,) = plan.cooling.rows
    assert (row.cdus, row.usable_cdus) == (2, 1)
    assert row.liquid_w == pytest.approx(sum(h.liquid_w for h in plan.cooling.racks), abs=1)
    assert 0 < row.margin_w < row.capacity_w
    assert row.flow_needed_lpm == pytest.approx(row.liquid_w / (4186 * 10) * 60, rel=1e-3)


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"cdu_model": "coolit-chx750"}, "cdus_per_row", "allowed: cdus_per_row >= 3"),
    ({"redundancy": "2N", "cdus_per_row": 1, "cdu_model": "coolit-chx750"}, "cdus_per_row", "short by"),
    ({"supply_temperature_c": 40}, "supply_temperature_c", "allowed: supply_temperature_c <= 30"),
    ({"delta_t_k": 5}, "delta_t_k", "l/min"),
])
def test_a_row_the_cdus_cannot_carry_is_refused_naming_the_row_and_margin(changes, field, words):
    with pytest.raises(PlanError) as caught:
        plan_cluster(with_loop(**changes))
    located = [(loc, msg) for loc, msg in caught.value.problems if loc[-1] == field]
    assert located and words in located[0][1], caught.value.problems
    assert located[0][0][:4] == ("site", "facility", "cooling", "liquid_loop")


def test_liquid_racks_without_a_loop_are_refused():
    with pytest.raises(PlanError) as caught:
        plan_cluster(with_loop(no_loop=True))
    assert any(loc == ("site", "facility", "cooling") and "declare cooling.liquid_loop" in msg
               for loc, msg in caught.value.problems)


def test_bom_and_pue_carry_the_liquid_plant():
    plan = plan_cluster(gb200())
    lines = {(line.kind, line.item): line for line in plan.bom.lines}
    assert lines[("cooling", "vertiv-xdu1350")].count == 2
    assert lines[("cooling", "leak-detection-per-rack")].count == 8
    assert lines[("cooling", "gb200-nvl72-manifold")].count == 8
    assert lines[("rack-system", "gb200-nvl72")].count == 8
    fac = gb200().site.facility
    share = plan.cooling.liquid_w / (plan.cooling.liquid_w + plan.cooling.air_w)
    assert plan.cooling.blended_pue == pytest.approx(share * 1.1 + (1 - share) * fac.pue, abs=1e-3)
    assert plan.cooling.blended_pue < fac.pue


def test_air_cooled_examples_carry_no_cooling_record():
    plan = plan_cluster(load_cluster(REPO / "inventory" / "dgx-b200-su.yaml")[0])
    assert plan.cooling is None and "cooling" not in plan.to_dict()
