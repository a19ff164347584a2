"""The SONiC apply merge (render/switches/sonic_merge.py) gives a config upstream's YANG accepts,
whatever buffer tables the switch holds before.

The running configs in data/sonic_running/ are upstream's own output for ACS-SN5400, made with
sonic-buildimage 086b03bd70's sonic-config-engine (sonic-cfggen), not by clusterforge:
- ACS-SN5400-factory.json: `sonic-cfggen -k ACS-SN5400 -p platform.json -S hwsku.json --preset t1`
  (the platform's default_sku is "ACS-SN5400 t1"), values as strings as CONFIG_DB returns them,
  empty tables left out (redis holds none);
- ACS-SN5400-qos-reload.json: that, plus what `config qos reload` renders from it (the HWSKU's
  buffers.json.j2 and qos.json.j2 with asic_type mellanox), plus the lossless PG 3-4 entries and
  pg_lossless_400000_5m_profile (pg_profile_lookup.ini's row) that buffermgrd adds in the
  traditional model for every port with PFC on.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fabric_examples import example

from clusterforge.plan.qos import dscp_map, queue_schedule
from clusterforge.render.switches._sonic import sonic_structured_config
from clusterforge.render.switches.facts import fabric_facts
from clusterforge.render.switches.sonic_merge import QOS_FAMILY, SONIC_MERGE, merge_config_db
from clusterforge.render.switches.sonic_yang import sonic_yang_problems

DATA = Path(__file__).parent / "data" / "sonic_running"
LEAF = "su01-leaf-rail0"  # roce-128gpu, ACS-SN5400, ToRRouter


def _running(name: str) -> dict:
    return json.loads((DATA / f"ACS-SN5400-{name}.json").read_text())


def _ours() -> dict:
    return json.loads(example("roce-128gpu")[2][f"switches/{LEAF}/config_db.json"])


def _table_replace(running: dict, new: dict) -> dict:
    """The merge before this one: each rendered table replaced, PORT/DEVICE_METADATA by field."""
    out = json.loads(json.dumps(running))
    for table, entries in new.items():
        if table in ("PORT", "DEVICE_METADATA"):
            for key, fields in entries.items():
                out.setdefault(table, {}).setdefault(key, {}).update(fields)
        else:
            out[table] = entries
    return out


def test_upstream_running_configs_are_valid_themselves():
    for name in ("factory", "qos-reload"):
        assert sonic_yang_problems(_running(name)) == [], name


@pytest.mark.parametrize("name", ["factory", "qos-reload"])
def test_merge_onto_an_upstream_config_validates(name):
    running, ours = _running(name), _ours()
    merged = merge_config_db(running, ours)
    assert sonic_yang_problems(merged) == []
    for table in QOS_FAMILY:  # the buffer/QoS family is ours alone: nothing of AZURE's is left
        assert merged.get(table) == ours.get(table), table
    assert merged["DEVICE_METADATA"]["localhost"]["mac"] == "1c:34:da:00:00:01"  # the switch's own, kept
    assert merged["BREAKOUT_CFG"] == running["BREAKOUT_CFG"]  # tables we do not render stay


def test_a_partial_family_would_dangle_without_the_family_rule():
    # a render without the per-port profile lists (clusterforge before this change) on a qos-reloaded
    # switch: replacing table by table keeps upstream's lists, which name profiles that are gone
    running = _running("qos-reload")
    partial = {t: v for t, v in _ours().items() if not t.startswith("BUFFER_PORT_")}
    partial["BUFFER_PROFILE"] = {k: v for k, v in partial["BUFFER_PROFILE"].items() if k != "ingress_lossless_profile"}
    dangling = sonic_yang_problems(_table_replace(running, partial))
    assert len(dangling) == 66 and all("refers to no BUFFER_PROFILE" in p for p in dangling)
    assert sonic_yang_problems(merge_config_db(running, partial)) == []


def test_merge_after_a_previous_clusterforge_apply():
    spec, plan, _ = example("roce-128gpu")
    facts = fabric_facts(plan)[LEAF]
    before = dataclasses.replace(plan.qos, roce_priority=4, pfc_cable_length_m=40, ets_roce_pct=60,
                                 dscp_to_tc=dscp_map("best_effort", 26, 4, 48, 6),
                                 queue_schedule=queue_schedule(4, 6, 60))
    previous = merge_config_db(_running("qos-reload"), sonic_structured_config(facts, before).config_db.tables())
    assert sonic_yang_problems(previous) == [] and "Ethernet0|4" in previous["BUFFER_PG"]
    merged = merge_config_db(previous, _ours())
    assert sonic_yang_problems(merged) == []
    assert "Ethernet0|4" not in merged["BUFFER_PG"] and "pg_lossless_400000_40m_profile" not in merged["BUFFER_PROFILE"]
    assert merge_config_db(merged, _ours()) == merged  # a second apply changes nothing


def test_a_render_without_qos_tables_keeps_the_switch_s_own():
    running = _running("qos-reload")
    ours = {t: v for t, v in _ours().items() if t not in QOS_FAMILY}  # a plane without RoCE
    merged = merge_config_db(running, ours)
    assert merged["BUFFER_PROFILE"] == running["BUFFER_PROFILE"] and sonic_yang_problems(merged) == []


def test_the_script_the_switch_runs_is_this_merge(tmp_path):
    running, new, out = tmp_path / "running.json", tmp_path / "new.json", tmp_path / "out.json"
    running.write_text((DATA / "ACS-SN5400-qos-reload.json").read_text())
    new.write_text(json.dumps(_ours()))
    subprocess.run([sys.executable, "-c", SONIC_MERGE, str(running), str(new), str(out)], check=True)
    assert json.loads(out.read_text()) == merge_config_db(_running("qos-reload"), _ours())
