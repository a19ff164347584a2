"""Adding SU 2 to the lab leaves every existing switch config byte-identical.

Spines, storage spines and aggregation switches carry ports and sessions for the whole envelope
from day one (the plan provisions them), so a new SU only adds the new SU's own switches' configs.
"""

from __future__ import annotations

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


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(second_su())
def test_adding_an_su_leaves_existing_switch_configs_intact(unit):
    spec, plan, before = example("lab")
    grown_spec = spec.model_copy(update={"scalable_units": [*spec.scalable_units, unit]})
    grown = plan_cluster(grown_spec)
    after = render_switches(grown)
    assert check_fabric(grown) == []
    missing = sorted(set(before) - set(after))
    assert not missing, f"files disappeared: {missing}"
    for path, old in before.items():
        assert after[path] == old, f"{path} changed when SU 2 was added"
    assert set(after) - set(before), "SU 2 added no switch configs"
