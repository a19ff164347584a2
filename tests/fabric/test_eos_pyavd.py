"""EOS running-config against Arista's own renderer: the same structured config through pyavd's
eos_cli_config_gen must give the same configuration (as a tree of commands, order-free)."""

from __future__ import annotations

import dataclasses

import pyavd  # Arista AVD: a test dependency (pyproject [test])
import pytest
from eos_avd import avd_structured_config, config_tree
from golden_cases import CASES, rendered

from clusterforge.render.switches.device_config import device_files
from clusterforge.render.switches.facts import fabric_facts
from clusterforge.render.switches.structured_config import device_structured_config

EOS_CASES = ("lab-eos", "roce-128gpu-eos")  # the second has VRRP (management/oob) and VARP (storage) gateways


def _eos_switches():
    for case in EOS_CASES:
        spec, plan = CASES[case].spec_and_plan()
        wanted = CASES[case].switches
        for name, facts in fabric_facts(plan).items():
            if wanted is None or name in wanted:
                yield f"{case}/{name}", device_structured_config(facts, plan.qos)


SWITCHES = dict(_eos_switches())


@pytest.mark.parametrize("name", sorted(SWITCHES))
def test_pyavd_accepts_the_structured_config(name):
    result = pyavd.validate_structured_config(avd_structured_config(SWITCHES[name]))
    violations = [f"{'.'.join(v.path)}: {v.message}" for v in result.validation_result.violations]
    assert violations == []
    assert result.validation_result.ignored_eos_config_keys == []


@pytest.mark.parametrize("name", sorted(SWITCHES))
def test_running_config_equals_pyavd_rendering(name):
    case, switch = name.split("/")
    ours = device_files("eos", SWITCHES[name])["running-config"]
    assert ours == rendered(case)[f"switches/{switch}/running-config"]
    theirs = pyavd.get_device_config(avd_structured_config(SWITCHES[name]))
    assert config_tree(ours) == config_tree(theirs)


def test_lossless_leaf_has_ets_and_strict_cnp_as_avd_writes_them():
    tree = config_tree(pyavd.get_device_config(avd_structured_config(SWITCHES["lab-eos/su01-leaf-rail0"])))
    profile = tree["qos profile ROCE"]
    assert profile["tx-queue 6"] == {"priority strict": {}}
    assert profile["tx-queue 3"] == {"bandwidth percent 50": {}, "no priority": {}}
    assert {q: profile[f"tx-queue {q}"] for q in (0, 1, 7)} == {  # every queue has a share (plan.qos)
        0: {"bandwidth percent 10": {}, "no priority": {}}, 1: {"bandwidth percent 8": {}, "no priority": {}},
        7: {"bandwidth percent 8": {}, "no priority": {}}}


def test_a_unicast_queue_platform_uses_uc_tx_queue_in_profile_and_interfaces():
    # the 7060DX5 (catalog eos_queue: uc-tx-queue): pyavd renders the same config from our structured config
    spec, plan = CASES["lab-eos"].spec_and_plan()
    facts = dataclasses.replace(fabric_facts(plan)["su01-leaf-rail0"], eos_queue="uc-tx-queue")
    sc = device_structured_config(facts, plan.qos)
    ours = device_files("eos", sc)["running-config"]
    assert config_tree(ours) == config_tree(pyavd.get_device_config(avd_structured_config(sc)))
    assert "\n   tx-queue " not in ours and "\n   uc-tx-queue 6\n      priority strict" in ours
    assert spec.catalog.switches["arista-7060dx5-64s"].eos_queue == "uc-tx-queue"


def test_the_comparison_sees_a_missing_or_changed_command():
    ours = device_files("eos", SWITCHES["lab-eos/su01-leaf-rail0"])["running-config"]
    theirs = pyavd.get_device_config(avd_structured_config(SWITCHES["lab-eos/su01-leaf-rail0"]))
    assert config_tree(ours.replace("   priority-flow-control priority 3 no-drop\n", "", 1)) != config_tree(theirs)
    assert config_tree(ours.replace("bandwidth percent 50", "bandwidth percent 60", 1)) != config_tree(theirs)


def test_gateways_are_compared_with_pyavd():
    """VARP and VRRP reach pyavd: its rendering of our gateway keys has the commands ours has."""
    agg = config_tree(pyavd.get_device_config(avd_structured_config(SWITCHES["roce-128gpu-eos/mgmt-agg-1"])))
    assert "vrrp 1 ipv4 10.20.0.1" in agg["interface Vlan30"]
    assert "vrrp 1 priority-level 200" in agg["interface Vlan30"]
    leaf = config_tree(pyavd.get_device_config(avd_structured_config(SWITCHES["roce-128gpu-eos/su01-stor-leaf-1"])))
    assert "ip virtual-router address 10.16.0.1" in leaf["interface Vlan20"]
    assert any(k.startswith("ip virtual-router mac-address ") for k in leaf)


def test_pfc_watchdog_per_port_and_dcbx_as_avd_writes_them():
    """The watchdog sits in the ROCE profile (pyavd: qos_profiles[].priority_flow_control.watchdog, the
    profile every lossless port applies); `dcbx mode ieee` is not in pyavd's schema and reaches it as the
    interface's raw CLI, so pyavd checks its place, not its grammar."""
    tree = config_tree(pyavd.get_device_config(avd_structured_config(SWITCHES["lab-eos/su01-leaf-rail0"])))
    profile = tree["qos profile ROCE"]
    assert "priority-flow-control pause watchdog" in profile
    assert "priority-flow-control pause watchdog port timer timeout 0.2 polling-interval auto recovery-time 0.2" \
        in profile
    assert "priority-flow-control pause watchdog port action drop" in profile
    assert tree["priority-flow-control pause watchdog default timeout 0.2"] == {}
    lossless = [k for k, v in tree.items() if k.startswith("interface Ethernet") and "service-profile ROCE" in v]
    assert lossless and all("dcbx mode ieee" in tree[k] for k in lossless)
