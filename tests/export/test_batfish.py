"""`export batfish`: a snapshot laid out as Batfish reads it (BfConsts paths, the SONiC packaging
rule, RANCID content-type detection) whose hosts/ and layer-1 documents validate against schemas
derived from Batfish's JSON property names, and whose edges name interfaces the configs define."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from export_examples import EXAMPLES, example

from clusterforge.export import export_batfish
from clusterforge.vocab import DeviceKind

# Batfish HostConfiguration / HostInterface JSON properties (representation/host/*.java).
HOST_SCHEMA = {
    "type": "object",
    "required": ["hostname", "hostInterfaces"],
    "additionalProperties": False,
    "properties": {
        "hostname": {"type": "string", "minLength": 1},
        "iptablesFile": {"type": "string"},
        "staticRoutes": {"type": "array", "items": {  # HostStaticRoute bean properties
            "type": "object", "required": ["prefix"], "additionalProperties": False,
            "properties": {"prefix": {"type": "string"}, "nextHopIp": {"type": "string"},
                           "nextHopInterface": {"type": "string"}, "administrativeCost": {"type": "integer"},
                           "tag": {"type": "integer"}}}},
        "overlay": {"type": "boolean"},
        "hostInterfaces": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["name"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string"}, "prefix": {"type": "string"}, "gateway": {"type": "string"},
                    "bandwidth": {"type": "number"}, "encapsulationVlan": {"type": "integer"},
                    "otherPrefixes": {"type": "array"}, "shared": {"type": "boolean"}, "vrf": {"type": "string"},
                },
            },
        },
    },
}
# Layer1Topology / Layer1Edge / Layer1Node (common/topology/*.java): hostname and interfaceName required.
_NODE = {"type": "object", "required": ["hostname", "interfaceName"], "additionalProperties": False,
         "properties": {"hostname": {"type": "string"}, "interfaceName": {"type": "string"}}}
LAYER1_SCHEMA = {
    "type": "object", "required": ["edges"], "additionalProperties": False,
    "properties": {"edges": {"type": "array", "items": {
        "type": "object", "required": ["node1", "node2"], "additionalProperties": False,
        "properties": {"node1": _NODE, "node2": _NODE}}}},
}
RANCID = re.compile(r"(?m)^[!#]RANCID-CONTENT-TYPE: ([a-zA-Z0-9_-]+)")  # Batfish's format detector


def _snapshot(name: str):
    plan, switch_files = example(name)
    return plan, export_batfish(plan, switch_files)


def _interfaces(files: dict[str, str], host: str) -> set[str]:
    """Interface names the snapshot's own document for ``host`` defines."""
    if f"hosts/{host}.json" in files:
        return set(json.loads(files[f"hosts/{host}.json"])["hostInterfaces"])
    if f"sonic_configs/{host}/config_db.json" in files:
        config_db = json.loads(files[f"sonic_configs/{host}/config_db.json"])
        return set(config_db.get("PORT", {})) | set(config_db.get("INTERFACE", {}))
    return set(re.findall(r"(?m)^interface (\S+)$", files[f"configs/{host}.cfg"]))


@pytest.mark.parametrize("name", EXAMPLES)
def test_layout_is_what_batfish_reads(name: str) -> None:
    _, snapshot = _snapshot(name)
    tops = {path.split("/", 1)[0] for path in snapshot.files}
    assert tops <= {"configs", "sonic_configs", "hosts", "batfish"}
    sonic_dirs: dict[str, set[str]] = {}
    for path in snapshot.files:
        parts = path.split("/")
        if parts[0] == "sonic_configs":
            assert len(parts) == 3, path  # files must sit in a per-device subdirectory
            sonic_dirs.setdefault(parts[1], set()).add(parts[2])
        elif parts[0] == "configs":
            assert len(parts) == 2 and path.endswith(".cfg")
            assert RANCID.search(snapshot.files[path]).group(1) == "arista"
    assert all(files == {"config_db.json", "frr.conf"} for files in sonic_dirs.values())


@pytest.mark.parametrize("name", EXAMPLES)
def test_hosts_and_layer1_validate_and_edges_name_defined_interfaces(name: str) -> None:
    plan, snapshot = _snapshot(name)
    hosts = [p for p in snapshot.files if p.startswith("hosts/")]
    assert len(hosts) == len([d for d in plan.devices if d.kind in DeviceKind.HOSTS])
    for path in hosts:
        jsonschema.validate(json.loads(snapshot.files[path]), HOST_SCHEMA)
    layer1 = json.loads(snapshot.files["batfish/layer1_topology.json"])
    jsonschema.validate(layer1, LAYER1_SCHEMA)
    edges = {(e["node1"]["hostname"], e["node1"]["interfaceName"], e["node2"]["hostname"], e["node2"]["interfaceName"])
             for e in layer1["edges"]}
    assert edges and {(c, d, a, b) for a, b, c, d in edges} == edges  # both directions
    for host, iface, _, _ in edges:
        assert iface in _interfaces(snapshot.files, host), (host, iface)


def test_schemas_reject_misnamed_properties() -> None:
    """Guard: the derived schemas are strict."""
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"hostname": "h", "hostInterfaces": {"e": {"name": "e", "address": "x"}}}, HOST_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"edges": [{"node1": {"hostname": "a", "interface": "x"}, "node2": {}}]}, LAYER1_SCHEMA)


def test_switches_without_a_batfish_parser_are_left_out_with_a_reason() -> None:
    plan, snapshot = _snapshot("lab")
    cumulus = {d.name for d in plan.devices if d.kind == "mgmt-switch"}
    assert {line.split(":", 1)[0] for line in snapshot.left_out} == cumulus
    assert all("NVUE" in line for line in snapshot.left_out)
    assert not [p for p in snapshot.files if any(f"/{name}" in p or p.endswith(f"{name}.cfg") for name in cumulus)]


def test_eos_lab_puts_every_switch_in_configs() -> None:
    plan, snapshot = _snapshot("lab-eos")
    switches = {d.name for d in plan.devices if d.kind not in (*DeviceKind.HOSTS, DeviceKind.PDU)}
    assert {p.removeprefix("configs/").removesuffix(".cfg") for p in snapshot.files if p.startswith("configs/")} \
        == switches
    assert snapshot.left_out == ()


def _batfish_default_route(host: dict) -> tuple[str, str] | None:
    """What Batfish's HostConfiguration does: the first host interface, in the order it reads them,
    that has a gateway gives the host's only default route."""
    for name, iface in host["hostInterfaces"].items():
        if "gateway" in iface:
            return name, iface["gateway"]
    return None


@pytest.mark.parametrize("name", ["lab", "roce-128gpu", "superpod-4su"])
def test_every_host_default_route_leaves_by_its_management_interface(name: str) -> None:
    plan, snapshot = _snapshot(name)
    for device in (d for d in plan.devices if d.kind in DeviceKind.HOSTS):
        host = json.loads(snapshot.files[f"hosts/{device.name}.json"])
        mgmt = next(i for i in device.interfaces if i.plane == "management")
        assert _batfish_default_route(host) == (mgmt.name, mgmt.gateway), device.name
        assert [n for n, i in host["hostInterfaces"].items() if "gateway" in i] == [mgmt.name]
        assert not [i for i in device.interfaces if i.plane == "oob" and i.name in host["hostInterfaces"]]


def test_storage_and_data_routes_are_static_routes_on_their_interfaces() -> None:
    plan, snapshot = _snapshot("lab")
    host = json.loads(snapshot.files["hosts/su01-r01-gpu01.json"])
    routes = {(r["prefix"], r["nextHopInterface"]): r for r in host["staticRoutes"]}
    bond = next(i for i in plan.device("su01-r01-gpu01").interfaces if i.plane == "storage")
    assert routes[(plan.pools["storage"]["pool"], "bond0")]["nextHopIp"] == bond.gateway
    rails = [i for i in plan.device("su01-r01-gpu01").interfaces if i.plane == "data"]
    for rail in rails:
        route = routes[(plan.pools["data"]["pool"], rail.name)]
        assert route["nextHopIp"] == rail.peer_ip and route["administrativeCost"] == 100 + rail.rail


@pytest.mark.parametrize("name", EXAMPLES)
def test_bond_members_edges_end_on_the_bond(name: str) -> None:
    plan, snapshot = _snapshot(name)
    layer1 = json.loads(snapshot.files["batfish/layer1_topology.json"])
    ends = [(e["node1"]["hostname"], e["node1"]["interfaceName"]) for e in layer1["edges"]]
    for device in (d for d in plan.devices if d.kind in DeviceKind.HOSTS):
        for bond in (i for i in device.interfaces if i.members):
            cabled = [lk for lk in plan.links if lk.a.device == device.name and lk.a.port in bond.members]
            assert not [e for e in ends if e[0] == device.name and e[1] in bond.members]
            if any(e[0] == lk.b.device for lk in cabled for e in ends):
                assert ends.count((device.name, bond.name)) == len(cabled) > 0
                host = json.loads(snapshot.files[f"hosts/{device.name}.json"])
                assert host["hostInterfaces"][bond.name]["prefix"] == bond.ip


def test_lab_installs_the_routes_the_plan_gives_hosts() -> None:
    """The lab and the Batfish hosts read one rule (plan/host_routes.py); the lab's routes are it."""
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.plan.host_routes import host_routes

    plan, _ = example("lab")
    lab = lab_topology(plan)
    for host in lab.hosts:
        if host.name not in {d.name for d in plan.devices if d.kind in DeviceKind.HOSTS}:
            continue
        ours = {(r.dst, r.via, r.dev, r.metric) for r in host_routes(plan, plan.device(host.name))}
        assert {(r.dst, r.via, r.dev, r.metric) for r in host.routes} == ours and ours, host.name


@pytest.mark.parametrize("edges", [[], [("a", "b", "c", "d")], [("sw\"1", "Ethernet1/1", "h\u00e4st", "bond0"),
                                                                  ("x", "y\\z", "u", "v\tw")]])
def test_layer1_text_is_json_dumps_indent_2(edges: list[tuple[str, str, str, str]]) -> None:
    from clusterforge.export.batfish import _EDGE, _layer1_json

    document = {"edges": [{"node1": {"hostname": a, "interfaceName": b}, "node2": {"hostname": c, "interfaceName": d}}
                          for a, b, c, d in edges]}
    texts = [_EDGE % tuple(json.dumps(part) for part in edge) for edge in edges]
    assert _layer1_json(texts) == json.dumps(document, indent=2) + "\n"


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_switches_of_the_nos_it_reads_are_enough(name: str) -> None:
    from clusterforge.export.batfish import SWITCH_NOS
    from clusterforge.render.switches import render_switches

    plan, switch_files = example(name)
    assert export_batfish(plan, render_switches(plan, SWITCH_NOS)) == export_batfish(plan, switch_files)
