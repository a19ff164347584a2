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

# Batfish's host model (batfish/batfish representation/host/HostConfiguration.java, HostInterface.java): the
# JSON properties their getters/setters and @JsonCreator declare; BatfishObjectMapper keeps Jackson's failure on
# unknown properties, so anything else rejects the file. HostConfiguration's static routes have no JSON property.
HOST_SCHEMA = {
    "type": "object",
    "required": ["hostname", "hostInterfaces"],
    "additionalProperties": False,
    "properties": {
        "hostname": {"type": "string", "minLength": 1},
        "iptablesFile": {"type": "string"},
        "overlay": {"type": "boolean"},
        "hostInterfaces": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["name"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string"}, "prefix": {"type": "string"}, "gateway": {"type": "string"},
                    "bandwidth": {"type": "number"}, "otherPrefixes": {"type": "array"}, "shared": {"type": "boolean"},
                    "vrf": {"type": "string"},
                },
            },
        },
    },
}
# Batfish.MANAGEMENT_INTERFACES (main/Batfish.java): processManagementInterfaces deactivates every interface whose
# name it finds, under the default ignoremanagementinterfaces=true.
BATFISH_MGMT = re.compile(
    r"(\Amgmt)|(\Amanagement)|(\Afxp0)|(\Aem0)|(\Ame0)|(\Avme)|(\Awlan-ap)|(\Aeth\d+-mgmt\d+)", re.IGNORECASE)
# vendor/sonic/representation: config_db tables whose entry class declares its properties without ignoring
# others (ConfigDb.Deserializer drops such a table whole on an undeclared one).
SONIC_STRICT = {
    "VLAN": {"dhcp_servers", "members", "vlanid"},  # Vlan.java
    "VLAN_MEMBER": {"tagging_mode"},  # VlanMember.java
    **{t: {"forced_mgmt_routes", "gwaddr", "secondary"}  # InterfaceKeyProperties.java
       for t in ("INTERFACE", "LOOPBACK_INTERFACE", "MGMT_INTERFACE", "VLAN_INTERFACE")},
    "MGMT_VRF_CONFIG": {"mgmtVrfEnabled", "in_band_mgmt_enabled"},  # MgmtVrf.java
}
# vendor/arista/grammar Legacy_interface.g4 eos_bandwidth_specifier (tokens in AristaLexer.g4)
BATFISH_EOS_SPEEDS = {"50gfull", "40gfull", "400g-4", "400gfull", "100g-1", "100gfull", "100full", "1000full",
                      "10000full", "25gfull", "200g-2"}
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
    """What Batfish's HostConfiguration does: the first host interface in name order (a TreeMap) that has a
    gateway gives the host's only default route."""
    for name in sorted(host["hostInterfaces"]):
        if "gateway" in host["hostInterfaces"][name]:
            return name, host["hostInterfaces"][name]["gateway"]
    return None


@pytest.mark.parametrize("name", ["lab", "roce-128gpu", "superpod-4su"])
def test_every_host_default_route_leaves_by_its_management_interface_kept_active(name: str) -> None:
    plan, snapshot = _snapshot(name)
    for device in (d for d in plan.devices if d.kind in DeviceKind.HOSTS):
        host = json.loads(snapshot.files[f"hosts/{device.name}.json"])
        mgmt = next(i for i in device.interfaces if i.plane == "management")
        route = _batfish_default_route(host)
        assert route is not None and route[1] == mgmt.gateway, device.name
        assert not BATFISH_MGMT.search(route[0]) and route[0].endswith(mgmt.name), (device.name, route)
        assert [n for n, i in host["hostInterfaces"].items() if "gateway" in i] == [route[0]]
        assert not [i for i in device.interfaces if i.plane == "oob" and i.name in host["hostInterfaces"]]


@pytest.mark.parametrize("name", EXAMPLES)
def test_no_host_interface_is_one_batfish_deactivates(name: str) -> None:
    _, snapshot = _snapshot(name)
    hosts = [json.loads(t) for p, t in snapshot.files.items() if p.startswith("hosts/")]
    assert hosts and not [(h["hostname"], n) for h in hosts for n in h["hostInterfaces"] if BATFISH_MGMT.search(n)]


def _config_dbs(snapshot) -> dict[str, dict]:
    return {p.split("/")[1]: json.loads(t) for p, t in snapshot.files.items() if p.endswith("/config_db.json")}


@pytest.mark.parametrize("name", EXAMPLES)
def test_sonic_tables_batfish_reads_carry_only_declared_properties(name: str) -> None:
    _, snapshot = _snapshot(name)
    bad = [(switch, table, key, prop) for switch, db in _config_dbs(snapshot).items()
           for table, declared in SONIC_STRICT.items() for key, entry in db.get(table, {}).items()
           for prop in entry if prop not in declared]
    assert not bad


@pytest.mark.parametrize("name", ["lab", "superpod-4su"])
def test_sonic_vlan_members_are_the_vlan_member_entries(name: str) -> None:
    """Batfish takes a VLAN's ports from VLAN.members and each one's tagging from VLAN_MEMBER; SONiC reads
    VLAN_MEMBER. Both name the same ports, and the switch's own file keeps what sonic-vlan.yang models."""
    plan, switch_files = example(name)
    snapshot = export_batfish(plan, switch_files)
    vlans = 0
    for switch, db in _config_dbs(snapshot).items():
        own = json.loads(switch_files[f"switches/{switch}/config_db.json"])
        assert own.get("VLAN_MEMBER") == db.get("VLAN_MEMBER")
        assert not [v for v in own.get("VLAN", {}).values() if "members" in v]  # not in sonic-vlan.yang
        for vlan, entry in db.get("VLAN", {}).items():
            ports = [k.split("|", 1)[1] for k in db.get("VLAN_MEMBER", {}) if k.split("|", 1)[0] == vlan]
            assert entry.get("members", []) == ports, (switch, vlan)
            vlans += bool(ports)
    assert vlans


@pytest.mark.parametrize("name", EXAMPLES)
def test_eos_speeds_in_the_snapshot_parse_in_batfish_grammar(name: str) -> None:
    _, snapshot = _snapshot(name)
    speeds = [m.group(1) for p, t in snapshot.files.items() if p.startswith("configs/")
              for m in re.finditer(r"(?m)^   speed (?:forced |auto )?(\S+)$", t)]
    assert set(speeds) <= BATFISH_EOS_SPEEDS


def test_eos_speeds_as_rendered_are_forms_eos_accepts() -> None:
    """pyavd's eos_cli_config_gen schema lists the values EOS's `speed` command takes."""
    from typing import get_args

    from pyavd._eos_cli_config_gen.schema import EosCliConfigGen

    accepted = set(get_args(EosCliConfigGen.EthernetInterfacesItem.Speed))
    _, switch_files = example("lab-eos")
    speeds = {m.group(1) for p, t in switch_files.items() if p.endswith("/running-config")
              for m in re.finditer(r"(?m)^   speed (.+)$", t)}
    assert speeds and speeds <= accepted
    assert not speeds & {"400g", "200g", "800g"}  # lane count written, as EOS shows it


def test_adapted_lines_name_each_change() -> None:
    plan, snapshot = _snapshot("lab-eos")
    change = re.compile(r"speed \S+ (as forced \S+|left out)( \(x\d+\))?")
    assert snapshot.adapted and all(change.fullmatch(part) for line in snapshot.adapted
                                    for part in line.split(": ", 1)[1].split("; "))
    assert any("speed 400g-8 as forced 400gfull" in line for line in snapshot.adapted)
    plan, snapshot = _snapshot("superpod-4su")
    assert any("static_anycast_gateway left out" in line for line in snapshot.adapted)


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
