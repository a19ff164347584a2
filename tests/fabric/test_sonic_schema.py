"""SONiC config_db.json files against facts derived from the upstream SONiC YANG models.

schemas/sonic_yang_facts.json comes from sonic-buildimage's sonic-yang-models (see
scripts/sonic-yang-facts.py); the negative cases show the checker rejects what libyang rejects.
"""

from __future__ import annotations

import json

import pytest
from fabric_examples import EXAMPLES, REPO, example

from clusterforge.render.switches.sonic_yang import sonic_yang_problems, yang_facts

INVENTORIES = sorted(p.stem for p in (REPO / "inventory").glob("*.yaml"))  # every example, not only EXAMPLES
SONIC_FILES = [(name, path) for name in INVENTORIES for path in sorted(example(name)[2])
               if path.endswith("/config_db.json")]


def test_every_example_has_sonic_switches():
    # roce-128gpu (data), superpod-4su (storage) and the lab planes: the check below is not vacuous
    assert {name for name, _ in SONIC_FILES} >= {"roce-128gpu", "superpod-4su", "lab", "device-h200x1"}


@pytest.mark.parametrize(("inventory", "path"), SONIC_FILES, ids=[f"{i}/{p}" for i, p in SONIC_FILES])
def test_config_db_matches_sonic_yang(inventory, path):
    assert sonic_yang_problems(example(inventory)[2][path]) == []


def test_facts_come_from_upstream_models():
    facts = yang_facts()
    assert "sonic-buildimage" in facts["source"]
    assert facts["tables"]["MAP_PFC_PRIORITY_TO_QUEUE"]["module"] == "sonic-pfc-priority-queue-map"
    assert facts["tables"]["PORT"]["lists"]["PORT_LIST"]["fields"]["lanes"]["mandatory"] is True


def _leaf() -> dict:
    return json.loads(example("lab")[2]["switches/su01-leaf-rail0/config_db.json"])


def _first(config: dict, table: str) -> str:
    return sorted(config[table])[0]


def test_rejects_a_port_without_lanes():
    config = _leaf()
    del config["PORT"][_first(config, "PORT")]["lanes"]
    assert any("mandatory field 'lanes'" in p for p in sonic_yang_problems(config))


def test_rejects_a_watchdog_below_the_yang_range():
    config = _leaf()
    config["PFC_WD"][_first(config, "PFC_WD")]["detection_time"] = "50"
    assert any("detection_time: 50 is outside 100..5000" in p for p in sonic_yang_problems(config))


def test_rejects_the_old_pfc_map_table_name():
    config = _leaf()
    config["PFC_PRIORITY_TO_QUEUE_MAP"] = config.pop("MAP_PFC_PRIORITY_TO_QUEUE")
    problems = sonic_yang_problems(config)
    assert any(p.startswith("PFC_PRIORITY_TO_QUEUE_MAP: no SONiC YANG model") for p in problems)
    assert any("pfc_to_queue_map" in p and "refers to no MAP_PFC_PRIORITY_TO_QUEUE" in p for p in problems)


def test_rejects_a_buffer_pg_with_a_missing_profile():
    config = _leaf()
    config["BUFFER_PG"][_first(config, "BUFFER_PG")]["profile"] = "pg_lossless_1_1m_profile"
    assert any("BUFFER_PG" in p and "refers to no BUFFER_PROFILE" in p for p in sonic_yang_problems(config))


def test_rejects_a_host_address_without_prefix_length():
    config = _leaf()
    port = _first(config, "PORT")
    config["INTERFACE"][f"{port}|198.18.0.0"] = {}
    assert any(p.startswith(f"INTERFACE|{port}|198.18.0.0") for p in sonic_yang_problems(config))


def test_rejects_an_unknown_field_and_an_unknown_routing_mode():
    config = _leaf()
    config["PORT"][_first(config, "PORT")]["lane"] = "0"
    config["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] = "splitunified"
    problems = sonic_yang_problems(config)
    assert any("field 'lane' is not in the YANG model" in p for p in problems)
    assert any("docker_routing_config_mode" in p for p in problems)


JSON_FILES = [(name, path) for name in EXAMPLES for path in sorted(example(name)[2]) if path.endswith(".json")]


@pytest.mark.parametrize(("inventory", "path"), JSON_FILES[::5], ids=[f"{i}/{p}" for i, p in JSON_FILES[::5]])
def test_rendered_json_is_json_dumps_with_sorted_keys(inventory, path):
    text = example(inventory)[2][path]
    assert text == json.dumps(json.loads(text), indent=4, sort_keys=True) + "\n"
