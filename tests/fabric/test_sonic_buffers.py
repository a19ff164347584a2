"""SONiC PORT entries from the catalog's per-HWSKU port maps, and lossless buffers sized as
docs/pfc-headroom.md works them out."""

from __future__ import annotations

import dataclasses
import json

import pytest
from fabric_examples import example

from clusterforge.plan.headroom import headroom, reserved_bytes, shared_pool_bytes
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


# Vectors: sonic-net/sonic-swss cfgmgr/buffer_headroom_mellanox.lua at e6b0c5b5d2ab (the script itself,
# evaluated by redis-server 7.0.15 EVAL with STATE_DB ASIC_TABLE from sonic-buildimage 086b03bd70
# platform/mellanox/asic_table.j2 and CONFIG_DB LOSSLESS_TRAFFIC_PATTERN mtu 1024 / small_packet_percentage
# 50 from its files/build_templates/buffers_config.j2; no shared headroom pool, no gearbox). ARGV: speed
# (Mb/s), cable, port MTU, gearbox 0, lane count. 2,520 such vectors (5 ASICs x 8 speeds x 7 cables x
# 3 MTUs x 3 lane counts) agreed to the byte when this was written; these are a spread of them.
LUA_VECTORS = [  # asic, Gb/s, cable m, mtu, lanes -> xon, xoff, size
    ("MELLANOX-SPECTRUM", 25, 100, 9000, 1, 19456, 23552, 43008),
    ("MELLANOX-SPECTRUM", 40, 300, 1500, 4, 19456, 31744, 51200),
    ("MELLANOX-SPECTRUM-2", 50, 5, 9000, 1, 19456, 27648, 47104),
    ("MELLANOX-SPECTRUM-3", 10, 1, 1500, 1, 19456, 11264, 30720),
    ("MELLANOX-SPECTRUM-3", 100, 40, 9000, 4, 19456, 53248, 72704),
    ("MELLANOX-SPECTRUM-3", 400, 100, 9000, 8, 38912, 149504, 197632),
    ("MELLANOX-SPECTRUM-4", 25, 1000, 9216, 1, 19456, 61440, 80896),
    ("MELLANOX-SPECTRUM-4", 100, 7, 1500, 4, 19456, 40960, 60416),
    ("MELLANOX-SPECTRUM-4", 200, 100, 9000, 8, 38912, 86016, 134144),
    ("MELLANOX-SPECTRUM-4", 400, 100, 9000, 4, 19456, 156672, 176128),
    ("MELLANOX-SPECTRUM-4", 400, 100, 9000, 8, 38912, 156672, 204800),  # the figure
    ("MELLANOX-SPECTRUM-4", 800, 100, 9000, 8, 38912, 227328, 275456),
    ("MELLANOX-SPECTRUM-4", 800, 300, 9216, 8, 38912, 477184, 525312),
    ("MELLANOX-SPECTRUM-5", 800, 100, 9000, 8, 38912, 227328, 275456),
]


@pytest.mark.parametrize("vector", LUA_VECTORS, ids=lambda v: f"{v[0]}-{v[1]}G-{v[2]}m-{v[3]}-{v[4]}lanes")
def test_headroom_equals_upstream_formula(vector):
    asic, speed, cable, mtu, lanes, xon, xoff, size = vector
    assert headroom(speed, cable, mtu, lanes, asic) == {"xon": xon, "xoff": xoff, "size": size}


def _ports(config: dict) -> list[tuple[int, int, int]]:
    return [(int(p["speed"]) // 1000, len(p["lanes"].split(",")), int(p["mtu"])) for p in config["PORT"].values()]


# Vectors: sonic-swss cfgmgr/buffer_pool_mellanox.lua at e6b0c5b5d2ab, evaluated by redis-server 7.0.15 EVAL on
# the rendered config_db.json (CONFIG_DB: BUFFER_POOL, PORT, DEVICE_METADATA, DEFAULT_LOSSLESS_BUFFER_PARAMETER),
# with APPL_DB as buffermgrd fills it (the rendered profiles, PGs, queues and profile lists, each "NULL" PG
# given the profile buffer_headroom_mellanox.lua computes) and STATE_DB ASIC_TABLE Spectrum-4 (cell 192,
# pipeline latency 19; asic_table.j2), no mmu_size (the script falls back to egress_lossless_pool's size).
POOL_VECTORS = [  # inventory, switch, ports, accumulative size (reserved), size of each pool without one
    ("roce-128gpu", "su01-leaf-rail0", 32, 9_863_168, 74_183_168),
    ("roce-128gpu", "spine-01", 64, 19_464_192, 69_382_656),
    ("lab", "spine-01", 8, 3_227_648, 77_500_928),
]


@pytest.mark.parametrize("vector", POOL_VECTORS, ids=lambda v: f"{v[0]}-{v[1]}")
def test_reserve_and_pools_equal_upstream_pool_script(vector):
    inventory, switch, count, reserved, pool = vector
    config = _config(inventory, switch)
    ports = _ports(config)
    cable = int(next(iter(config["CABLE_LENGTH"].values()))["Ethernet0"].removesuffix("m"))
    buffers = example(inventory)[0].catalog.switches[example(inventory)[1].device(switch).model].sonic.buffers
    assert len(ports) == count
    assert reserved_bytes(ports, cable, buffers.asic) == reserved
    assert shared_pool_bytes(buffers, reserved) == pool


def test_a_fully_used_sn5600_at_800g_leaves_most_of_its_buffer():
    # the same script on 64 x 800G 8-lane ports, MTU 9000: 100 m and 1,000 m of cable
    buffers = example("lab")[0].catalog.switches["sn5600"].sonic.buffers
    assert reserved_bytes([(800, 8, 9000)] * 64, 100, buffers.asic) == 23_986_176
    assert reserved_bytes([(800, 8, 9000)] * 64, 1000, buffers.asic) == 95_813_632
    assert shared_pool_bytes(buffers, 95_813_632) == 31_207_936


def test_lossless_pg_is_left_to_buffermgrd():
    config = _config("roce-128gpu", "su01-leaf-rail0")
    assert config["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
    assert config["BUFFER_PG"]["Ethernet8|3"] == {"profile": "NULL"}
    assert not [name for name in config["BUFFER_PROFILE"] if name.startswith("pg_lossless_")]
    assert config["CABLE_LENGTH"]["ROCE"]["Ethernet8"] == "100m"  # buffermgrd reads the length from here
    # buffers_config.j2's dynamic-mode tables, the headroom script's inputs
    assert config["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] == {"AZURE": {"default_dynamic_th": "0"}}
    assert config["LOSSLESS_TRAFFIC_PATTERN"] == {"AZURE": {"mtu": "1024", "small_packet_percentage": "50"}}


def test_switches_without_lossless_ports_keep_the_traditional_model():
    configs = [json.loads(text) for path, text in example("lab")[2].items() if path.endswith("config_db.json")]
    plain = [c for c in configs if "BUFFER_PG" not in c]
    assert plain and all(c["DEVICE_METADATA"]["localhost"]["buffer_model"] == "traditional" for c in plain)


def test_lossless_pg_and_queue_for_the_roce_priority_only():
    config = _config("roce-128gpu", "su01-leaf-rail0")
    assert config["BUFFER_PG"]["Ethernet8|0"] == {"profile": "ingress_lossy_profile"}
    assert config["BUFFER_QUEUE"]["Ethernet8|3"] == {"profile": "egress_lossless_profile"}
    assert {k: v["profile"] for k, v in config["BUFFER_QUEUE"].items() if k.startswith("Ethernet8|")} == {
        "Ethernet8|3": "egress_lossless_profile", "Ethernet8|0-2": "q_lossy_profile",
        "Ethernet8|4-7": "q_lossy_profile"}
    assert config["PORT_QOS_MAP"]["Ethernet8"]["pfc_to_queue_map"] in config["MAP_PFC_PRIORITY_TO_QUEUE"]
    assert config["BUFFER_PORT_INGRESS_PROFILE_LIST"]["Ethernet8"] == {
        "profile_list": "ingress_lossless_profile,ingress_lossy_profile"}
    assert config["BUFFER_PORT_EGRESS_PROFILE_LIST"]["Ethernet8"] == {
        "profile_list": "egress_lossless_profile,egress_lossy_profile"}
    assert set(config["BUFFER_PORT_INGRESS_PROFILE_LIST"]) == set(config["PORT"])


def test_pools_as_the_dynamic_templates_write_them():
    # buffers_defaults_objects.j2 with dynamic_mode: only egress_lossless_pool carries a size (ACS-SN5400's
    # egress_lossless_pool_size, the same in its t0 and t1 templates); buffermgrd sizes the others
    for switch in ("su01-leaf-rail0", "spine-01"):
        pools = _config("roce-128gpu", switch)["BUFFER_POOL"]
        assert pools == {"ingress_lossless_pool": {"mode": "dynamic", "type": "ingress"},
                         "ingress_lossy_pool": {"mode": "dynamic", "type": "ingress"},
                         "egress_lossless_pool": {"mode": "dynamic", "size": "158229504", "type": "egress"},
                         "egress_lossy_pool": {"mode": "dynamic", "type": "egress"}}
    leaf = _config("roce-128gpu", "su01-leaf-rail0")
    assert leaf["BUFFER_PROFILE"]["ingress_lossy_profile"]["pool"] == "ingress_lossy_pool"


# sonic-net/SONiC determine-FEC design, "Table 2: FEC Mapping Based on Lane Speed and Number of Lanes"
_FEC_TABLE_2 = {(10, 1): "none", (10, 4): "none", (20, 2): "none",
                **{(25, n): "rs" for n in (1, 2, 4, 8)}, **{(50, n): "rs" for n in (1, 2, 4, 8, 16)}}


def _upstream_fec(speed_mbps: int, lanes: int) -> str | None:
    if speed_mbps >= 200_000:
        return "rs"  # IEEE 802.3 clause 119: RS(544,514) on 200GBASE-R / 400GBASE-R
    lane_gbps = speed_mbps // lanes // 1000
    if lane_gbps > 50:
        return "rs"  # 100G lanes are PAM4 with RS(544,514) (802.3ck), beyond table 2's rows
    return _FEC_TABLE_2.get((lane_gbps, lanes))


def test_fec_and_device_metadata_as_upstream_tools_write_them():
    leaf = _config("roce-128gpu", "su01-leaf-rail0")
    assert leaf["PORT"]["Ethernet8"]["fec"] == "rs"  # 400G on 8 lanes: 50G per lane
    meta = leaf["DEVICE_METADATA"]["localhost"]
    assert (meta["platform"], meta["hwsku"]) == ("x86_64-nvidia_sn5400-r0", "ACS-SN5400")
    ports = [p for name in ("superpod-4su", "roce-128gpu", "lab") for path, text in example(name)[2].items()
             if path.endswith("config_db.json") for p in json.loads(text)["PORT"].values()]
    wrong = [(p["speed"], p["lanes"], p.get("fec")) for p in ports
             if (p.get("fec") or "none") != (_upstream_fec(int(p["speed"]), len(p["lanes"].split(","))) or "none")
             and _upstream_fec(int(p["speed"]), len(p["lanes"].split(","))) is not None]
    assert ports and not wrong
    eight_lane_200g = [p for p in ports if p["speed"] == "200000" and len(p["lanes"].split(",")) == 8]
    assert all(p.get("fec") == "rs" for p in eight_lane_200g)


def test_200g_on_eight_lanes_carries_rs_fec():
    from clusterforge.render.switches._sonic.ports import needs_rs_fec

    assert needs_rs_fec(200, 8) and needs_rs_fec(400, 8) and needs_rs_fec(100, 4) and needs_rs_fec(25, 1)
    assert not needs_rs_fec(10, 1) and not needs_rs_fec(40, 4) and not needs_rs_fec(1, 1)


def test_headroom_beyond_the_pool_is_refused_by_name():
    spec, plan, _ = example("roce-128gpu")
    facts = fabric_facts(plan)["spine-01"]
    qos = dataclasses.replace(plan.qos, pfc_cable_length_m=100_000)
    with pytest.raises(ValueError, match="spine-01: lossless headroom .* leave no shared buffer .*pfc_cable_length_m"):
        BUFFER_POOL(facts, qos)
    no_buffers = dataclasses.replace(facts, sonic_platform=facts.sonic_platform.model_copy(update={"buffers": None}))
    with pytest.raises(ValueError, match="no SONiC buffer parameters"):
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
    assert problems and problems[0][0] == ("networks", "data", "leaf_model")
    assert "a 400G link, but ACS-SN5600 (sn5600) runs that port at 800G only" in problems[0][1]
