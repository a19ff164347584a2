"""The BGP process in every routed NOS's structured config is a frozen typed record: a misspelt field
is an AttributeError while the structured config is built, and nothing downstream can change it."""

from __future__ import annotations

import dataclasses

import pytest
from golden_cases import CASES

from clusterforge.render.switches._frr.router_bgp import BgpNeighbor, RouterBgp
from clusterforge.render.switches._sonic.schema import SonicConfig
from clusterforge.render.switches.facts import fabric_facts
from clusterforge.render.switches.structured_config import device_structured_config


def _bgp(case: str) -> list[RouterBgp]:
    _, plan = CASES[case].spec_and_plan()
    found = []
    for facts in fabric_facts(plan).values():
        config = device_structured_config(facts, plan.qos)
        bgp = config.frr.router_bgp if isinstance(config, SonicConfig) else getattr(config, "router_bgp", None)
        if bgp is not None:
            found.append(bgp)
    return found


@pytest.mark.parametrize("case", ["lab", "lab-eos"])  # FRR on SONiC, EOS
def test_router_bgp_is_a_frozen_record(case):
    sessions = _bgp(case)
    assert sessions and all(isinstance(b, RouterBgp) for b in sessions)
    bgp = next(b for b in sessions if b.neighbors)
    assert all(isinstance(n, BgpNeighbor) and n.remote_as for n in bgp.neighbors)
    with pytest.raises(AttributeError):
        bgp.neighbours  # noqa: B018 - the misspelling a dict would have hidden until render time
    with pytest.raises(dataclasses.FrozenInstanceError):
        bgp.neighbors[0].remote_as = 1  # type: ignore[misc]
