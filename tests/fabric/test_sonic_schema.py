"""SONiC config_db.json files validate against the schema, and the schema does reject bad input."""

from __future__ import annotations

import json

import pytest
from fabric_examples import EXAMPLES, example

from clusterforge.render.switches.validate import sonic_schema_problems

SONIC_FILES = [(name, path) for name in EXAMPLES for path in sorted(example(name)[2])
               if path.endswith("/config_db.json")]


@pytest.mark.parametrize(("inventory", "path"), SONIC_FILES, ids=[f"{i}/{p}" for i, p in SONIC_FILES])
def test_config_db_matches_schema(inventory, path):
    assert sonic_schema_problems(example(inventory)[2][path]) == []


def _leaf_config_db() -> dict:
    return json.loads(example("lab")[2]["switches/su01-leaf-rail0/config_db.json"])


def test_schema_rejects_a_host_address_without_prefix_length():
    config = _leaf_config_db()
    config["INTERFACE"]["Ethernet0|198.18.0.0"] = {}
    assert any("INTERFACE" in p for p in sonic_schema_problems(config))


def test_schema_rejects_a_port_name_sonic_does_not_use():
    config = _leaf_config_db()
    config["PORT"]["swp1"] = {"admin_status": "up", "mtu": "9000"}
    assert any("PORT" in p for p in sonic_schema_problems(config))


def test_schema_rejects_an_unknown_table():
    config = _leaf_config_db()
    config["PORT_QOS_MAPS"] = {}
    assert sonic_schema_problems(config)


JSON_FILES = [(name, path) for name in EXAMPLES for path in sorted(example(name)[2]) if path.endswith(".json")]


@pytest.mark.parametrize(("inventory", "path"), JSON_FILES[::5], ids=[f"{i}/{p}" for i, p in JSON_FILES[::5]])
def test_rendered_json_is_json_dumps_with_sorted_keys(inventory, path):
    text = example(inventory)[2][path]
    assert text == json.dumps(json.loads(text), indent=4, sort_keys=True) + "\n"
