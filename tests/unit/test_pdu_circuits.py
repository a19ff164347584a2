"""PDUs per rack side: each PDU on its own feed circuit within the PDU model's rating, as many pairs as a
rack's load needs with the headroom, stable names and addresses (issue 13's last item)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hostile_fixtures import assert_refused, line_of, run_cli, workdir
from hypothesis import assume, given
from hypothesis import strategies as st
from test_plan_properties import SETTINGS, base_spec, clusters

from clusterforge.model import ClusterSpec, ScalableUnit, load_cluster
from clusterforge.plan import Plan, PlanError, plan_cluster
from clusterforge.plan.facility import pairs_needed, rack_budget, spread_outlets
from clusterforge.render.report.elevation import rack_view

ROOT = Path(__file__).resolve().parents[2]
SUPERPOD = ROOT / "inventory" / "superpod-4su.yaml"
FEED_LINE = "feed: {voltage_v: 415, amperage_a: 63, phases: 3, max_utilisation: 0.8}"


@lru_cache(maxsize=1)
def superpod() -> tuple[ClusterSpec, Plan]:
    spec, _ = load_cluster(SUPERPOD)
    return spec, plan_cluster(spec)


def small_circuits(units: list[ScalableUnit]) -> ClusterSpec:
    """The property base on 8 A circuits (4.6 kW each) with up to 4 PDUs per side: 2-3 servers need 2."""
    base = base_spec()
    facility = base.site.facility.model_copy(update={
        "feed": base.site.facility.feed.model_copy(update={"amperage_a": 8}), "pdus_per_side": 4})
    site = base.site.model_copy(update={"facility": facility})
    return base.model_copy(update={"site": site, "scalable_units": units})


def _check_pdus(spec: ClusterSpec, plan: Plan) -> None:
    """Every PDU within its circuit and outlets; a side's PDUs carry the whole rack; pairs as the load needs."""
    fac = spec.site.facility
    pdu_model = spec.catalog.pdus[fac.pdu_model]
    budget = rack_budget(spec)
    by_rack: dict[str, list] = {}
    psus_per_side: dict[str, int] = {}
    for device in plan.devices:
        if device.rack:
            psus_per_side[device.rack] = psus_per_side.get(device.rack, 0) + max(1, len(device.psu_feeds) // 2)
    for pdu in plan.pdus:
        by_rack.setdefault(pdu.rack, []).append(pdu)
    assert fac.feed.amperage_a <= pdu_model.rating_a
    for rack in plan.racks:
        pdus = by_rack[rack.name]
        assert [p.name for p in pdus] == list(rack.pdus)
        pairs = len(pdus) // 2
        outlets = psus_per_side.get(rack.name, 0)
        assert pairs == pairs_needed(rack.power_w, outlets, budget, fac.headroom, pdu_model.outlets), rack.name
        expected = [f"{rack.name}-pdu-{side}{k if k > 1 else ''}" for k in range(1, pairs + 1) for side in "ab"]
        assert list(rack.pdus) == expected
        for side in "AB":
            mine = [p for p in pdus if p.feed == side]
            assert abs(sum(p.load_w for p in mine) - rack.power_w) < 1e-6 * max(1.0, rack.power_w)
            for p in mine:
                assert 0 < p.load_w <= p.capacity_w <= fac.feed.capacity_w + 1e-6, p
                assert p.outlets_used <= p.outlets == pdu_model.outlets, p
                assert abs(sum(p.phase_load_w) - p.load_w) < 1e-6 * max(1.0, p.load_w)
        assert rack.power_w <= rack.capacity_w * (1 - fac.headroom) + 1e-6


def test_superpod_gets_two_pdu_pairs_per_compute_rack_each_within_its_63a_circuit():
    spec, plan = superpod()
    _check_pdus(spec, plan)
    compute = [r for r in plan.racks if r.role == "compute"]
    assert len(compute) == 32
    for rack in compute:  # 4 DGX H100 (~41 kW) > one 63 A circuit less 20 % (29 kW): two per side
        assert list(rack.pdus) == [f"{rack.name}-pdu-{x}" for x in ("a", "b", "a2", "b2")]
    for rack in plan.racks:  # network and site racks are lighter: one pair
        if rack.role != "compute":
            assert len(rack.pdus) == 2, rack.name
    assert plan.summary.pdus == len(plan.pdus) == 32 * 4 + 8 * 2
    assert [(line.item, line.count) for line in plan.bom.lines if line.kind == "pdu"] == [("raritan-px3-415v-63a", 144)]
    addresses = [p.ip for p in plan.pdus]
    assert all(addresses) and len(set(addresses)) == len(addresses)


def test_psus_of_a_server_spread_across_the_pdus_of_its_side():
    spec, plan = superpod()
    pdus = [p for p in plan.pdus if p.rack == "su01-r01" and p.feed == "A"]
    assert [p.name for p in pdus] == ["su01-r01-pdu-a", "su01-r01-pdu-a2"]
    members = [d for d in plan.devices if d.rack == "su01-r01"]
    side = spread_outlets(members, 2, 3, 36)
    for device in members:
        if device.kind == "server":  # 3 PSUs per side of a DGX H100: on both PDUs of the side
            assert sorted(set(side.outlets[device.name])) == [0, 1], device.name
    assert [p.outlets_used for p in pdus] == side.used
    assert sum(side.used) == sum(len(d.psu_feeds) // 2 for d in members)
    assert abs(pdus[0].load_w - pdus[1].load_w) <= max(d.power_w / 3 for d in members)


def test_rack_view_shows_every_pdu_of_a_side():
    spec, plan = superpod()
    rack = next(r for r in plan.racks if r.name == "su01-r01")
    view = rack_view(rack, [d for d in plan.devices if d.rack == rack.name],
                     [p for p in plan.pdus if p.rack == rack.name], spec.site.facility)
    labels = {feed["feed"]: feed["label"] for feed in view["feeds"]}
    assert "su01-r01-pdu-a + su01-r01-pdu-a2" in labels["A"]
    assert "su01-r01-pdu-b + su01-r01-pdu-b2" in labels["B"]
    assert all(0 < feed["load_fraction"] <= 1 for feed in view["feeds"])


def test_a_feed_above_the_pdu_rating_is_refused_at_its_current(tmp_path: Path, capsys):
    """The declaration the superpod had before: 125 A feeds on 63 A PDUs, in validate, plan and render."""
    text = SUPERPOD.read_text()
    path = workdir(tmp_path) / "superpod.yaml"
    path.write_text(text.replace("amperage_a: 63,", "amperage_a: 125,", 1))
    out = tmp_path / "out"
    for command in (["validate", path], ["plan", path], ["render", path, "--out", out]):
        assert_refused(run_cli(capsys, *map(str, command)), path, line_of(text, FEED_LINE),
                       "site.facility.feed.amperage_a",
                       "a 125 A circuit exceeds PDU model 'raritan-px3-415v-63a', rated 63 A")
    assert not out.exists() or not any(out.rglob("*"))


def test_too_few_pdus_per_side_is_refused_at_the_rack_that_needs_more(tmp_path: Path, capsys):
    text = SUPERPOD.read_text()
    path = workdir(tmp_path) / "superpod.yaml"
    path.write_text(text.replace("pdus_per_side: 2", "pdus_per_side: 1", 1))
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, path, line_of(text, "- {id: 1, server_model: dgx-h100"),
                   "scalable_units.0.nodes_per_rack", "rack su01-r01: 41,063 W exceeds its budget 28,982 W")


def test_pairs_needed_follows_load_and_outlets_within_the_declared_most():
    spec = small_circuits([])
    budget = rack_budget(spec)  # 8 A circuits: 4,600 W, 3,680 W with 20 % headroom; 36 outlets per PDU
    assert pairs_needed(0, 0, budget, 0.2, 36) == 1
    assert pairs_needed(3_680, 2, budget, 0.2, 36) == 1
    assert pairs_needed(3_700, 2, budget, 0.2, 36) == 2
    assert pairs_needed(100, 37, budget, 0.2, 36) == 2  # outlets alone
    assert pairs_needed(1e6, 2, budget, 0.2, 36) == 4  # capped; the rack budget check refuses the rest


@SETTINGS
@given(clusters())
def test_small_circuits_get_as_many_pairs_as_the_load_needs(units):
    spec = small_circuits(units)
    try:
        plan = plan_cluster(spec)
    except PlanError as exc:
        assert all("exceeds" in message for _, message in exc.problems)
        return
    _check_pdus(spec, plan)


@SETTINGS
@given(clusters(), st.integers(1, 6), st.booleans())
def test_adding_an_su_creates_pdus_and_changes_none(units, new_id, small):
    assume(new_id not in {u.id for u in units})  # an SU id already taken is not an addition
    make = small_circuits if small else (lambda us: base_spec().model_copy(update={"scalable_units": us}))
    extra = ScalableUnit(id=new_id, server_model="hgx-h200-2gpu", nodes=8, racks=4, nodes_per_rack=2)
    try:
        before, after = plan_cluster(make(units)), plan_cluster(make([*units, extra]))
    except PlanError as exc:  # refusing is allowed (a rack over its budget); it must say by how much
        assert all("exceeds" in message for _, message in exc.problems), exc.problems
        return
    new = {p.name: p for p in after.pdus}
    for pdu in before.pdus:  # identity and address never move (a shared rack's load may grow)
        assert pdu.name in new, f"{pdu.name} vanished"
        moved = new[pdu.name]
        assert (moved.rack, moved.feed, moved.model, moved.ip, moved.asset_id, moved.capacity_w) == (
            pdu.rack, pdu.feed, pdu.model, pdu.ip, pdu.asset_id, pdu.capacity_w)
        if pdu.rack.startswith("su"):  # an existing SU's racks gain nothing
            assert moved == pdu
    racks = {r.name: r for r in after.racks}
    for rack in before.racks:  # pairs are only ever appended
        assert racks[rack.name].pdus[:len(rack.pdus)] == rack.pdus
