"""SONiC PORT entries from the catalog's per-HWSKU port maps, and lossless buffers sized as
docs/pfc-headroom.md works them out."""

from __future__ import annotations

import dataclasses
import json

import pytest
from fabric_examples import example

from clusterforge.plan.headroom import headroom
from clusterforge.render.switches._sonic.buffers import BUFFER_POOL
from clusterforge.render.switches.facts import fabric_facts


def _config(inventory: str, switch: str) -> dict:
    return json.loads(example(inventory)[2][f"switches/{switch}/config_db.json"])


def test_port_lanes_alias_index_come_from_the_sn5400_port_map():
    spec = example("roce-128gpu")[0]
    ports = spec.catalog.switches["sn5400"].sonic.ports()
    assert (ports[1].name, ports[1].lanes, ports[1].alias, ports[1].index) == (
        "Ethernet8", "8,9,10,11,12,13,14,15", "etp2", 2)  # ACS-SN5400 port_config.ini, second cage
    port = _config("roce-128gpu", "su01-leaf-rail0")["PORT"]["Ethernet8"]
    assert {k: port[k] for k in ("lanes", "alias", "index", "speed")} == {
        "lanes": "8,9,10,11,12,13,14,15", "alias": "etp2", "index": "2", "speed": "400000"}


def test_two_run_port_map_of_a_tor_with_uplinks():
    ports = example("lab")[0].catalog.switches["sn2410"].sonic.by_name
    assert (ports["Ethernet188"].lanes, ports["Ethernet188"].index) == ("188", 48)
    assert (ports["Ethernet192"].lanes, ports["Ethernet192"].index) == ("192,193,194,195", 49)


def test_headroom_arithmetic_matches_the_doc():
    assert headroom(400, 100, 9000) == {"xon": 18036, "xoff": 118036, "size": 136072}
    assert headroom(800, 100, 9000) == {"xon": 18036, "xoff": 218036, "size": 236072}
    assert headroom(400, 300, 9000)["xoff"] - headroom(400, 100, 9000)["xoff"] == 2 * 200 * 5 * 400 // 8


def test_lossless_pg_and_queue_for_the_roce_priority_only():
    config = _config("roce-128gpu", "su01-leaf-rail0")
    assert config["BUFFER_PG"]["Ethernet8|3"] == {"profile": "pg_lossless_400000_100m_profile"}
    assert config["BUFFER_PG"]["Ethernet8|0"] == {"profile": "ingress_lossy_profile"}
    assert config["BUFFER_QUEUE"]["Ethernet8|3"] == {"profile": "egress_lossless_profile"}
    assert {k for k in config["BUFFER_QUEUE"] if k.startswith("Ethernet8|")} == {
        "Ethernet8|3", "Ethernet8|0-2", "Ethernet8|4-7"}
    assert config["PORT_QOS_MAP"]["Ethernet8"]["pfc_to_queue_map"] in config["MAP_PFC_PRIORITY_TO_QUEUE"]


def test_headroom_beyond_the_pool_is_refused_by_name():
    spec, plan, _ = example("roce-128gpu")
    facts = fabric_facts(plan)["spine-01"]
    qos = dataclasses.replace(plan.qos, pfc_cable_length_m=100_000)
    with pytest.raises(ValueError, match="spine-01: lossless headroom .* exceeds .*pfc_cable_length_m"):
        BUFFER_POOL(facts, qos)
    no_buffers = dataclasses.replace(facts, sonic_platform=facts.sonic_platform.model_copy(update={"buffers": None}))
    with pytest.raises(ValueError, match="no SONiC buffer pool sizes"):
        BUFFER_POOL(no_buffers, plan.qos)


def test_a_port_speed_the_hwsku_does_not_allow_is_refused():
    from clusterforge.plan.sonic_checks import port_speed_problems

    spec, plan, _ = example("lab")
    assert port_speed_problems(spec, plan) == []
    sn5600 = spec.catalog.switches["sn5600"]
    run = sn5600.sonic.runs[0].model_copy(update={"speeds_gbps": [800]})
    only_800 = sn5600.sonic.model_copy(update={"runs": [run]})
    switches = {**spec.catalog.switches, "sn5600": sn5600.model_copy(update={"sonic": only_800})}
    narrowed = spec.model_copy(update={"catalog": spec.catalog.model_copy(update={"switches": switches})})
    problems = port_speed_problems(narrowed, plan)
    assert problems and problems[0][0] == ("networks", "data")
    assert "a 400G link, but ACS-SN5600 (sn5600) runs that port at 800G only" in problems[0][1]
