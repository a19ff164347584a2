"""InfiniBand planes get no PFC/ECN; the subnet manager gets the partitions."""

from __future__ import annotations

import json
import re

import pytest
from fabric_examples import example

LOSSLESS_WORDS = re.compile(r"pfc|ecn|wred|dscp|qos|priority-flow|lossless", re.IGNORECASE)


def _ib_files() -> dict[str, str]:
    spec, plan, files = example("superpod-4su")
    ib_switches = {d.name for d in plan.devices if d.plane == "data" and d.kind in ("leaf", "spine", "core")}
    return {path: text for path, text in files.items() if path.split("/")[1] in ib_switches}


def test_every_ib_switch_gets_only_ib_json():
    files = _ib_files()
    assert files
    assert {path.rsplit("/", 1)[1] for path in files} == {"ib.json"}


@pytest.mark.parametrize("path", sorted(_ib_files())[:8] + sorted(_ib_files())[-8:])
def test_ib_switch_config_has_no_pfc_or_ecn(path):
    assert not LOSSLESS_WORDS.search(_ib_files()[path])


def test_ib_switch_ports_are_the_plan_links():
    spec, plan, files = example("superpod-4su")
    config = json.loads(files["switches/su01-leaf-rail0/ib.json"])
    cabled = {link.b.port for link in plan.links if link.b.device == "su01-leaf-rail0"}
    cabled |= {link.a.port for link in plan.links if link.a.device == "su01-leaf-rail0"}
    assert {p["port"] for p in config["ports"]} == cabled


def test_opensm_partitions_hold_default_and_the_plane_pkey():
    text = example("superpod-4su")[2]["switches/_fabric/opensm-partitions.conf"]
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines == ["Default=0x7fff, ipoib, mtu=5 : ALL=full ;",
                     "data=0x0064, ipoib, mtu=5 : ALL_CAS=full, ALL_SWITCHES=full, SELF=full ;"]


def test_no_partitions_without_an_infiniband_plane():
    assert not any("_fabric" in path for path in example("roce-128gpu")[2])  # neither partitions nor opensm.conf


def test_opensm_conf_sets_the_planned_engine_priority_and_partitions_file():
    text = example("superpod-4su")[2]["switches/_fabric/opensm.conf"]
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines == ["sm_priority 15", "routing_engine ftree,updn", "partition_config_file /etc/opensm/partitions.conf"]
