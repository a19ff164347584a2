"""Plane separation: eth0 always in VRF mgmt, the data plane never bridged, access planes in their own VLAN."""

from __future__ import annotations

import io
import json
import re

import pytest
from fabric_examples import EXAMPLES, example
from golden_cases import rendered
from ruamel.yaml import YAML


def nvue(text: str) -> dict:
    return next(doc["set"] for doc in YAML(typ="safe", pure=True).load(io.StringIO(text)) if "set" in doc)


def _all_files():
    for name in EXAMPLES:
        yield from ((name, path, text) for path, text in example(name)[2].items())
    yield from (("lab-eos", path, text) for path, text in rendered("lab-eos").items())


def _switch_files():
    return [(name, path) for name, path, _ in _all_files() if "/_fabric/" not in path
            and not path.endswith("/frr.conf")]


SWITCH_FILES = _switch_files()
TEXT = {(name, path): text for name, path, text in _all_files()}


@pytest.mark.parametrize(("inventory", "path"), SWITCH_FILES[::7], ids=[f"{i}/{p}" for i, p in SWITCH_FILES[::7]])
def test_management_port_is_in_vrf_mgmt(inventory, path):
    text = TEXT[(inventory, path)]
    if path.endswith("config_db.json"):
        config = json.loads(text)
        assert config["MGMT_VRF_CONFIG"] == {"vrf_global": {"mgmtVrfEnabled": "true"}}
        assert all(key.startswith("eth0|") for key in config["MGMT_INTERFACE"])
    elif path.endswith("startup.yaml"):
        eth0 = nvue(text)["interface"]["eth0"]
        assert eth0.get("vrf", eth0.get("ip", {}).get("vrf")) == "mgmt"  # NVUE 5.15: interface vrf; 5.14: ip vrf
    elif path.endswith("running-config"):
        assert re.search(r"^interface Management1\n   vrf mgmt\n   ip address ", text, re.MULTILINE)
        assert "no ip routing vrf mgmt" in text
    else:
        assert json.loads(text)["management"]["vrf"] == "mgmt"


def test_every_example_switch_has_a_management_vrf_config():
    checked = {path.split("/")[1] for _, path in SWITCH_FILES}
    for name in EXAMPLES:
        switches = {d.name for d in example(name)[1].devices if d.kind in ("leaf", "spine", "core", "mgmt-switch")}
        assert switches <= checked


@pytest.mark.parametrize("inventory", ["lab", "roce-128gpu"])
def test_data_plane_switches_are_never_bridged(inventory):
    spec, plan, files = example(inventory)
    for device in plan.devices:
        if device.plane == "data" and device.kind != "server":
            config = json.loads(files[f"switches/{device.name}/config_db.json"])
            assert not {"VLAN", "VLAN_MEMBER", "VLAN_INTERFACE"} & set(config), device.name


@pytest.mark.parametrize(("inventory", "tor", "vlan"), [("lab", "su01-r01-mgmt", 30), ("lab", "su01-r01-oob", 40),
                                                        ("roce-128gpu", "su01-r02-mgmt", 30)])
def test_access_tor_puts_hosts_in_its_plane_vlan_and_trunks_to_the_agg_pair(inventory, tor, vlan):
    spec, plan, files = example(inventory)
    interfaces = nvue(files[f"switches/{tor}/startup.yaml"])["interface"]
    hosts = {link.b.port for link in plan.links if link.b.device == tor}
    uplinks = {link.a.port: link.b.device for link in plan.links if link.a.device == tor}
    assert hosts and len(uplinks) == 2
    for port in hosts:
        assert interfaces[port]["bridge"]["domain"]["br_default"] == {"access": vlan}
    for port in uplinks:
        assert interfaces[port]["bridge"]["domain"]["br_default"] == {"untagged": "none", "vlan": {str(vlan): {}}}
    assert {agg.rsplit("-", 1)[0] for agg in uplinks.values()} == {f"{'mgmt' if vlan == 30 else 'oob'}-agg"}
    assert not any({"ip", "ipv4"} & set(iface) for name, iface in interfaces.items() if name != "eth0")
