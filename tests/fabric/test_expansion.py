"""Adding SU 2 to the lab leaves every existing leaf and host-facing switch config byte-identical.

Spines, storage spines and aggregation switches legitimately gain sessions and ports for the new
SU: everything they had before must still be there (text: old lines a subset of the new;
config_db.json: old tables and entries a sub-mapping of the new).
"""

from __future__ import annotations

import json

from fabric_examples import example
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusterforge.model import ScalableUnit
from clusterforge.plan import plan_cluster
from clusterforge.plan.fabric_checks import check_fabric
from clusterforge.render.switches import render_switches

LAB_SERVER = "hgx-h200-2gpu"


@st.composite
def second_su(draw) -> ScalableUnit:
    """SU id 2 within the lab envelope: up to 4 nodes in up to 2 racks."""
    racks = draw(st.integers(1, 2))
    nodes = draw(st.integers(1, 4))
    per_rack = draw(st.one_of(st.none(), st.integers(-(-nodes // racks), 4)))
    return ScalableUnit(id=2, server_model=LAB_SERVER, nodes=nodes, racks=racks, nodes_per_rack=per_rack)


def is_sub_mapping(old, new) -> bool:
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and is_sub_mapping(v, new[k]) for k, v in old.items())
    return old == new


def _unchanged_switches(plan) -> set[str]:
    """Leaves and ToRs: switches in an SU (every host-facing switch). Site switches may grow."""
    return {d.name for d in plan.devices if d.kind in ("leaf", "spine", "core", "mgmt-switch") and d.su is not None}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(second_su())
def test_adding_an_su_leaves_existing_switch_configs_intact(unit):
    spec, plan, before = example("lab")
    grown_spec = spec.model_copy(update={"scalable_units": [*spec.scalable_units, unit]})
    grown = plan_cluster(grown_spec)
    after = render_switches(grown_spec, grown)
    assert check_fabric(grown) == []
    unchanged = _unchanged_switches(plan)
    missing = sorted(set(before) - set(after))
    assert not missing, f"files disappeared: {missing}"
    for path, old in before.items():
        switch = path.split("/")[1]
        new = after[path]
        if switch in unchanged:
            assert new == old, f"{path} changed when SU 2 was added"
        elif path.endswith(".json"):
            assert is_sub_mapping(json.loads(old), json.loads(new)), f"{path} lost entries when SU 2 was added"
        else:
            lost = set(old.splitlines()) - set(new.splitlines())
            assert not lost, f"{path} lost lines when SU 2 was added: {sorted(lost)[:5]}"
    assert set(after) - set(before), "SU 2 added no switch configs"
