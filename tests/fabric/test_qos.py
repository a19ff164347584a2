"""The one RoCE intent reaches every NOS: DSCP 26 -> TC 3 lossless, PFC on priority 3 only, ECN on queue 3."""

from __future__ import annotations

import io
import json
import math
import re

import pytest
from fabric_examples import example
from golden_cases import rendered
from ruamel.yaml import YAML

ROCE_SONIC = [("lab", "su01-leaf-rail0"), ("lab", "spine-01"), ("roce-128gpu", "su01-leaf-rail0"),
              ("roce-128gpu", "spine-08")]
QOS_TABLES = ("DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
              "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "BUFFER_POOL", "BUFFER_PORT_INGRESS_PROFILE_LIST",
              "PORT_QOS_MAP", "PFC_WD", "WRED_PROFILE", "SCHEDULER", "QUEUE", "CABLE_LENGTH")


def config_db(inventory: str, switch: str) -> dict:
    return json.loads(example(inventory)[2][f"switches/{switch}/config_db.json"])


def nvue(text: str) -> dict:
    documents = YAML(typ="safe", pure=True).load(io.StringIO(text))
    return next(doc["set"] for doc in documents if "set" in doc)


@pytest.mark.parametrize(("inventory", "switch"), ROCE_SONIC)
def test_sonic_maps_roce_dscp_26_to_tc_3_and_cnp_48_to_tc_6(inventory, switch):
    dscp_map = config_db(inventory, switch)["DSCP_TO_TC_MAP"]["ROCE"]
    assert dscp_map["26"] == "3"
    assert dscp_map["48"] == "6"
    assert len(dscp_map) == 64
    # the default policy "precedence": DSCP >> 3 (24-31 lossless with 26), except that nothing else enters TC 6 (CNP)
    others = {int(d): int(tc) for d, tc in dscp_map.items() if d not in ("26", "48")}
    assert 6 not in set(others.values())
    assert all(tc == (d >> 3 if d >> 3 != 6 else 0) for d, tc in others.items())
    assert config_db(inventory, switch)["PORT_QOS_MAP"]["global"] == {"dscp_to_tc_map": "ROCE"}


@pytest.mark.parametrize(("inventory", "switch"), ROCE_SONIC)
def test_sonic_enables_pfc_and_watchdog_on_priority_3_only_on_every_port(inventory, switch):
    config = config_db(inventory, switch)
    port_qos = {k: v for k, v in config["PORT_QOS_MAP"].items() if k != "global"}
    assert set(port_qos) == set(config["PORT"])
    assert {entry["pfc_to_pg_map"] for entry in port_qos.values()} == {"ROCE"}
    assert config["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] == {"ROCE": {"3": "3"}}
    assert {entry["pfc_enable"] for entry in port_qos.values()} == {"3"}
    assert {entry["pfcwd_sw_enable"] for entry in port_qos.values()} == {"3"}
    assert {entry["dscp_to_tc_map"] for entry in port_qos.values()} == {"ROCE"}
    assert set(config["PFC_WD"]) == set(config["PORT"])


@pytest.mark.parametrize(("inventory", "switch"), ROCE_SONIC)
def test_sonic_marks_ecn_on_the_roce_queue(inventory, switch):
    config = config_db(inventory, switch)
    profiles = {key.split("|")[1]: value.get("wred_profile") for key, value in config["QUEUE"].items()}
    assert {queue for queue, profile in profiles.items() if profile} == {"3"}
    wred = config["WRED_PROFILE"]["ROCE_LOSSLESS"]
    for colour in ("green", "yellow", "red"):  # as upstream's AZURE_LOSSLESS: all three colours
        assert (wred["ecn"], wred[f"wred_{colour}_enable"], wred[f"{colour}_min_threshold"],
                wred[f"{colour}_max_threshold"], wred[f"{colour}_drop_probability"]) \
            == ("ecn_all", "true", "150000", "1500000", "100")


@pytest.mark.parametrize(("inventory", "switch"), ROCE_SONIC)
def test_sonic_schedules_every_queue(inventory, switch):
    config = config_db(inventory, switch)
    weights = {}
    for port in config["PORT"]:
        queues = {q: config["QUEUE"][f"{port}|{q}"]["scheduler"] for q in range(8)}  # KeyError = a queue left out
        assert queues[6] == "STRICT" and config["SCHEDULER"]["STRICT"] == {"type": "STRICT"}
        weights = {q: int(config["SCHEDULER"][name]["weight"]) for q, name in queues.items() if q != 6}
        assert weights[3] == 50 and sum(weights.values()) == 100 and min(weights.values()) >= 1
    assert weights == {0: 10, 1: 8, 2: 8, 3: 50, 4: 8, 5: 8, 7: 8}


@pytest.mark.parametrize(("inventory", "switch"), [("lab", "su01-stor-leaf-1"), ("lab", "stor-spine-01"),
                                                   ("superpod-4su", "su01-stor-leaf-1")])
def test_sonic_non_roce_planes_carry_no_lossless_tables(inventory, switch):
    assert not set(QOS_TABLES) & set(config_db(inventory, switch))


def test_cumulus_roce_plane_spells_out_the_intent():
    qos = nvue(rendered("lab-cumulus-roce")["switches/su01-leaf-rail0/startup.yaml"])["qos"]
    assert qos["roce"] == {"state": "enabled", "mode": "lossless"}  # NVUE 5.15 spelling (the default)
    dscp = {int(d): v["switch-priority"] for d, v in qos["mapping"]["default-global"]["dscp"].items()}
    assert sorted(dscp) == list(range(64))  # every DSCP: NVUE's trust-l3 default sends 24-31 to priority 3
    assert {d for d, p in dscp.items() if p == 3} == set(range(24, 32))  # the RoCE DSCP's class, as NVUE's default
    assert {d for d, p in dscp.items() if p == 6} == {48}
    assert set(qos["pfc"]["default-global"]["switch-priority"]) == {"3"}
    ecn = qos["congestion-control"]["default-global"]["traffic-class"]
    assert set(ecn) == set("01234567")  # every TC: the RoCE profile's default marks TC 0 too
    assert {tc for tc, e in ecn.items() if e["ecn"] == "enable"} == {"3"}
    assert all(e == {"ecn": "disable"} for tc, e in ecn.items() if tc != "3")
    assert (ecn["3"]["min-threshold"], ecn["3"]["max-threshold"]) == (150000, 1500000)
    # every switch priority to its own TC, where the RoCE profile sends 0-2, 4, 5 and 7 to TC 0
    queues = qos["egress-queue-mapping"]["default-global"]["switch-priority"]
    assert {int(sp): e["traffic-class"] for sp, e in queues.items()} == {sp: sp for sp in range(8)}
    scheduler = qos["egress-scheduler"]["default-global"]["traffic-class"]
    assert scheduler["6"] == {"mode": "strict"}
    assert set(scheduler) == set("01234567")  # every TC a share: none left at DWRR 0
    assert sum(e["bw-percent"] for e in scheduler.values() if e["mode"] == "dwrr") == 100
    assert scheduler["3"] == {"mode": "dwrr", "bw-percent": 50}
    assert qos["pfc-watchdog"] == {"polling-interval": 100, "robustness": 2}  # 100 ms x 2 = pfc_watchdog_ms 200


def test_cumulus_watchdog_timers_give_the_declared_detection_time():
    from clusterforge.render.switches._cumulus.qos import watchdog_timers

    for ms in (100, 199, 200, 250, 1000, 4999, 5000):
        polling, robustness = watchdog_timers(ms)
        assert 100 <= polling <= 5000 and 1 <= robustness <= 1000 and ms - robustness < polling * robustness <= ms


def test_cumulus_non_roce_plane_has_no_qos():
    text = example("roce-128gpu")[2]["switches/su01-stor-leaf-1/startup.yaml"]
    assert "qos" not in nvue(text)


def test_eos_maps_dscp_26_to_tc_3_and_pfc_no_drop_on_3_only():
    text = rendered("lab-eos")["switches/su01-leaf-rail0/running-config"]
    assert "qos map dscp 24 25 26 27 28 29 30 31 to traffic-class 3\n" in text
    mapped = {int(d): int(tc) for ds, tc in re.findall(r"^qos map dscp ([\d ]+) to traffic-class (\d)$", text, re.M)
              for d in ds.split()}
    assert sorted(mapped) == list(range(64))  # every DSCP written: EOS's default sends 24-31 to TC 3
    assert {d for d, tc in mapped.items() if tc == 3} == set(range(24, 32))
    assert {d for d, tc in mapped.items() if tc == 6} == {48}
    assert set(re.findall(r"priority-flow-control priority (\d) no-drop", text)) == {"3"}
    # one queue family for profile and interfaces (the lab's switch models have no eos_queue: tx-queue)
    assert set(re.findall(r"^   (u?c?-?tx-queue) \d", text, re.M)) == {"tx-queue"}
    assert set(re.findall(r"^   tx-queue (\d)", text.split("\ninterface ", 1)[0], re.M)) == set("01234567")
    interfaces = text.count("\ninterface Ethernet")
    assert text.count("   qos trust dscp\n") == interfaces
    assert "priority-flow-control pause watchdog default timeout 0.2" in text


# One intent, three NOS: the lab's data plane rendered for SONiC (the lab itself), EOS and Cumulus NVUE.
def _sonic_lab() -> dict:
    return json.loads(rendered("lab")["switches/su01-leaf-rail0/config_db.json"])


def _eos_lab() -> str:
    return rendered("lab-eos")["switches/su01-leaf-rail0/running-config"]


def _nvue_lab() -> dict:
    return nvue(rendered("lab-cumulus-roce")["switches/su01-leaf-rail0/startup.yaml"])["qos"]


# What `nv set qos roce` (lossless) itself configures, as NVIDIA documents it (Cumulus Linux user guide,
# "RDMA over Converged Ethernet - RoCE": the default RoCE configuration table and the `nv show qos roce`
# output, CumulusNetworks/docs content/cumulus-linux-515/.../RDMA-over-Converged-Ethernet-RoCE.md at 48a436d5).
# NVIDIA does not document whether this profile or an explicit default-global setting wins, so the
# rendered file must decide every cell itself: _nvue_effective lays the file over these defaults,
# and the comparisons below hold whichever way round NVUE resolves them only if nothing is left to them.
NVUE_ROCE_DEFAULTS = {
    "priority_to_tc": {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0},  # "other switch priority to TC 0"
    "ets": {0: ("dwrr", 50), 3: ("dwrr", 50), 6: ("strict", None)},
    "ecn_tcs": {0, 3},  # enabled-tc 0,3
}


def _nvue_effective(qos: dict) -> dict:
    """The RoCE profile's values with every one the rendered file sets replaced by the file's."""
    sp_to_tc = dict(NVUE_ROCE_DEFAULTS["priority_to_tc"])
    sp_to_tc.update({int(sp): e["traffic-class"]
                     for sp, e in qos.get("egress-queue-mapping", {}).get("default-global", {})
                     .get("switch-priority", {}).items()})
    dscp_to_sp = {int(d): v["switch-priority"] for d, v in qos["mapping"]["default-global"]["dscp"].items()}
    ecn = set(NVUE_ROCE_DEFAULTS["ecn_tcs"])
    for tc, e in qos["congestion-control"]["default-global"]["traffic-class"].items():
        (ecn.add if e.get("ecn") == "enable" else ecn.discard)(int(tc))
    ets = dict(NVUE_ROCE_DEFAULTS["ets"])
    ets.update({int(tc): (e["mode"], e.get("bw-percent"))
                for tc, e in qos["egress-scheduler"]["default-global"]["traffic-class"].items()})
    return {"dscp_to_tc": {d: sp_to_tc[sp] for d, sp in dscp_to_sp.items()}, "ecn_tcs": ecn, "ets": ets}


def test_the_effective_nvue_model_sees_what_the_roce_profile_would_leave():
    # the file before this change: no egress-queue-mapping, ECN written only for TC 3
    qos = _nvue_lab()
    old = {**qos, "congestion-control": {"default-global": {"traffic-class": {
        "3": qos["congestion-control"]["default-global"]["traffic-class"]["3"]}}}}
    del old["egress-queue-mapping"]
    effective = _nvue_effective(old)
    assert effective["ecn_tcs"] == {0, 3}
    assert effective["dscp_to_tc"][8] == 0 and effective["dscp_to_tc"][26] == 3  # DSCP 8 -> priority 1 -> TC 0


def _dscp_maps() -> dict[str, dict[int, int]]:
    eos = {int(d): int(tc) for ds, tc in re.findall(r"^qos map dscp ([\d ]+) to traffic-class (\d)$", _eos_lab(), re.M)
           for d in ds.split()}
    nvue_map = _nvue_effective(_nvue_lab())["dscp_to_tc"]  # DSCP -> switch priority -> TC
    sonic = {int(d): int(tc) for d, tc in _sonic_lab()["DSCP_TO_TC_MAP"]["ROCE"].items()}
    return {"sonic": sonic, "eos": eos, "nvue": nvue_map}


def test_three_nos_map_the_roce_class_24_to_31_lossless_and_only_cnp_to_the_strict_class():
    # NVUE: DSCP -> switch priority (mapping) -> TC (egress-queue-mapping), over the RoCE profile's defaults
    maps = _dscp_maps()
    lossless = {nos: {d for d, tc in m.items() if tc == 3} for nos, m in maps.items()}
    strict = {nos: {d for d, tc in m.items() if tc == 6} for nos, m in maps.items()}
    assert lossless == dict.fromkeys(maps, set(range(24, 32)))
    assert strict == dict.fromkeys(maps, {48})
    assert maps["sonic"] == maps["eos"] == maps["nvue"]


def _ecn_classes() -> dict[str, set[int]]:
    sonic = _sonic_lab()
    eos_queues = re.findall(r"^   (?:uc-)?tx-queue (\d)\n      random-detect ecn minimum-threshold", _eos_lab(), re.M)
    return {
        "sonic": {int(k.split("|")[1]) for k, v in sonic["QUEUE"].items() if v.get("wred_profile")},
        "eos": {int(q) for q in eos_queues},
        "nvue": _nvue_effective(_nvue_lab())["ecn_tcs"],  # with the RoCE profile's TC 0 unless disabled
    }


def test_three_nos_mark_ecn_on_the_same_traffic_classes():
    classes = _ecn_classes()
    assert classes == dict.fromkeys(classes, {3})


def test_three_nos_give_the_roce_class_the_same_share_and_cnp_strict():
    sonic = _sonic_lab()
    sonic_roce = {sonic["SCHEDULER"][v["scheduler"]]["weight"] for k, v in sonic["QUEUE"].items() if k.endswith("|3")}
    eos_profile = _eos_lab().split("\nqos profile ROCE\n", 1)[1].split("\n!", 1)[0]
    eos_roce = re.search(r"tx-queue 3\n((?:      .*\n?)*)", eos_profile).group(1)
    nvue_ets = _nvue_lab()["egress-scheduler"]["default-global"]["traffic-class"]
    assert sonic_roce == {"50"}
    assert "bandwidth percent 50" in eos_roce
    assert nvue_ets["3"] == {"mode": "dwrr", "bw-percent": 50}
    assert re.search(r"tx-queue 6\n      priority strict", eos_profile) and nvue_ets["6"] == {"mode": "strict"}


def test_eos_counts_ecn_marks_on_every_lossless_port():
    text = _eos_lab()
    lossless = text.count("   priority-flow-control priority 3 no-drop\n")
    assert lossless and text.count("      random-detect ecn count\n") == lossless


def _eos_profile_weights(text: str) -> dict[int, tuple[str, int | None]]:
    profile = text.split("\nqos profile ROCE\n", 1)[1].split("\n!\n", 1)[0]
    out: dict[int, tuple[str, int | None]] = {}
    for q, body in re.findall(r"tx-queue (\d)\n((?:      .*\n?)*)", profile):
        share = re.search(r"bandwidth percent (\d+)", body)
        weight = int(share.group(1)) if share else None
        out[int(q)] = ("strict", None) if "priority strict" in body else ("dwrr", weight)
    return out


def test_three_nos_schedule_every_class_alike():
    sonic = _sonic_lab()
    sonic_ets = {}
    for key, value in sonic["QUEUE"].items():
        if key.startswith("Ethernet0|"):
            sched = sonic["SCHEDULER"][value["scheduler"]]
            sonic_ets[int(key.split("|")[1])] = ("strict", None) if sched["type"] == "STRICT" else \
                ("dwrr", int(sched["weight"]))
    nvue_ets = _nvue_effective(_nvue_lab())["ets"]
    assert sonic_ets == _eos_profile_weights(_eos_lab()) == nvue_ets
    assert nvue_ets[0] == ("dwrr", 10) and nvue_ets[3] == ("dwrr", 50)  # not the RoCE profile's 50/50


def test_three_nos_run_the_pfc_watchdog_on_every_lossless_port_with_the_same_timings():
    from clusterforge.render.switches._cumulus.qos import watchdog_timers

    sonic = _sonic_lab()
    assert {(v["detection_time"], v["restoration_time"], v["action"]) for v in sonic["PFC_WD"].values()} \
        == {("200", "200", "drop")}
    nvue_wd = _nvue_lab()["pfc-watchdog"]
    assert nvue_wd["polling-interval"] * nvue_wd["robustness"] == 200 == math.prod(watchdog_timers(200))
    text = _eos_lab()
    profile = text.split("\nqos profile ROCE\n", 1)[1].split("\n!\n", 1)[0]
    assert "   priority-flow-control pause watchdog\n" in profile  # enabled on every port applying ROCE
    assert "   priority-flow-control pause watchdog port timer timeout 0.2 polling-interval auto recovery-time 0.2\n" \
        in profile
    assert "   priority-flow-control pause watchdog port action drop\n" in profile
    lossless = text.count("   priority-flow-control priority 3 no-drop\n")
    assert lossless and text.count("   service-profile ROCE\n") == lossless


def test_eos_watchdog_seconds_are_in_eos_grammar_and_never_longer():
    from clusterforge.render.switches._eos.qos import eos_seconds

    for ms in range(100, 5001, 7):
        text = eos_seconds(ms)
        assert re.fullmatch(r"\d+(\.\d{1,2})?", text)  # pyavd's pattern for timeout and recovery-time
        assert ms - 10 < float(text) * 1000 <= ms + 1e-9


def test_eos_runs_ieee_dcbx_on_every_lossless_port():
    text = _eos_lab()
    lossless = text.count("   priority-flow-control priority 3 no-drop\n")
    assert lossless and text.count("   dcbx mode ieee\n") == lossless
