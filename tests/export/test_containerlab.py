"""`export containerlab`: the clab.yml validates against a schema derived from containerlab's
published topology schema (schemas/containerlab-clab.schema.json), and says what the Plan says:
every planned Ethernet link once, interface names each kind accepts, startup configs that are the
rendered ones, the oob plane as the management network."""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from export_examples import EXAMPLES, example

from clusterforge.export import export_containerlab
from clusterforge.export.containerlab import ExportError, interface_name

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "containerlab-clab.schema.json").read_text())
# What each kind takes as an endpoint interface name (containerlab kind docs).
KIND_IFNAME = {
    "sonic-vs": re.compile(r"^eth[1-9]\d*$"),
    "arista_ceos": re.compile(r"^eth[1-9]\d*(_\d+)*$"),
    "nvidia_cumulusvx": re.compile(r"^swp[1-9]\d*$"),
    "linux": re.compile(r"^[A-Za-z0-9_.-]{1,15}$"),
}


def _export(name: str):
    plan, switch_files = example(name)
    exported = export_containerlab(plan, switch_files)
    return plan, switch_files, exported, yaml.safe_load(exported.files["clab.yml"])


@pytest.mark.parametrize("name", EXAMPLES)
def test_clab_yml_validates_against_the_containerlab_schema(name: str) -> None:
    _, _, _, clab = _export(name)
    jsonschema.Draft202012Validator(SCHEMA).validate(clab)


def test_schema_rejects_what_containerlab_refuses() -> None:
    """Guard against a vacuous schema: unknown node keys, unknown kinds, three-ended links fail."""
    _, _, _, clab = _export("lab")
    validator = jsonschema.Draft202012Validator(SCHEMA)
    node = next(iter(clab["topology"]["nodes"].values()))
    for broken in ({**node, "startup_config": "x"}, {**node, "kind": "sonic"}):
        bad = {**clab, "topology": {**clab["topology"], "nodes": {"n1": broken}}}
        assert not validator.is_valid(bad)
    link = clab["topology"]["links"][0]
    three = {**link, "endpoints": [*link["endpoints"], "x:eth9"]}
    assert not validator.is_valid({**clab, "topology": {**clab["topology"], "links": [three]}})
    assert not validator.is_valid({**clab, "name": "bad name"})


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_planned_ethernet_link_appears_once(name: str) -> None:
    plan, _, exported, clab = _export(name)
    nodes = clab["topology"]["nodes"]
    endpoints = [e for link in clab["topology"]["links"] for e in link["endpoints"]]
    assert len(endpoints) == len(set(endpoints)), "an interface is on two links"
    for endpoint in endpoints:
        node, iface = endpoint.split(":", 1)
        assert KIND_IFNAME[nodes[node]["kind"]].match(iface), endpoint
    expected = [link for link in plan.links
                if link.plane != "oob" and link.a.device in nodes and link.b.device in nodes]
    assert len(clab["topology"]["links"]) == len(expected) > 0
    assert [link["mtu"] for link in clab["topology"]["links"]] == [link.mtu for link in expected]
    left = {line.split(":", 1)[0] for line in exported.left_out}
    assert left | set(nodes) == {d.name for d in plan.devices if d.kind != "pdu"}


def _start_sh(lanemap_orig: str, port_config_orig: str, present: set[str]) -> tuple[dict[str, str], list[str]]:
    """What docker-sonic-vs's start.sh (sonic-buildimage 086b03bd70) leaves in lanemap.ini and
    port_config.ini, given the .orig files and the container's ethN: lanemap lines of existing
    interfaces; port_config lines whose lanes (whitespace-delimited) equal one of those lines' lanes."""
    lanemap = {line.split(":", 1)[0]: line.split(":", 1)[1] for line in lanemap_orig.splitlines()
               if line.split(":", 1)[0] in present}
    ports = [line for lanes in lanemap.values() for line in port_config_orig.splitlines()
             if re.search(rf"\s{lanes}\s", line)]
    return lanemap, ports


def test_sonic_vs_wires_each_link_to_its_port_through_the_generated_lanemap() -> None:
    """Follow a link end the way SONiC-VS does: ethN -> lanes (lanemap) -> the PORT entry with those lanes."""
    for name in ("lab", "roce-128gpu"):
        plan, switch_files, exported, clab = _export(name)
        nodes = clab["topology"]["nodes"]
        checked = 0
        for link, planned in zip(clab["topology"]["links"], [
                lk for lk in plan.links if lk.plane != "oob" and lk.a.device in nodes and lk.b.device in nodes],
                strict=True):
            for endpoint, end in zip(link["endpoints"], (planned.a, planned.b), strict=True):
                node, iface = endpoint.split(":", 1)
                if nodes[node]["kind"] != "sonic-vs":
                    continue
                ports = json.loads(switch_files[f"switches/{node}/config_db.json"])["PORT"]
                present = {e.split(":", 1)[1] for lk in clab["topology"]["links"] for e in lk["endpoints"]
                           if e.startswith(f"{node}:")}
                lanemap, lines = _start_sh(exported.files[f"configs/{node}/lanemap.ini"],
                                           exported.files[f"configs/{node}/port_config.ini"], present)
                owner = [p for p, entry in ports.items() if entry["lanes"] == lanemap[iface]]
                assert owner == [end.port], endpoint
                assert len(lines) == len(present)  # every wired port survives start.sh's filter, once
                checked += 1
        assert checked > 0
        for node in (n for n, v in nodes.items() if v["kind"] == "sonic-vs"):
            binds = dict(b.split(":", 1) for b in nodes[node]["binds"])
            assert binds[f"configs/{node}/lanemap.ini"].endswith("/Force10-S6000/lanemap.ini.orig")
            assert binds[f"configs/{node}/port_config.ini"].endswith("/Force10-S6000/port_config.ini.orig")


def test_sonic_vs_names_ports_by_front_panel_index() -> None:
    _, switch_files, exported, _ = _export("lab")
    ports = json.loads(switch_files["switches/spine-01/config_db.json"])["PORT"]
    lanemap = dict(line.split(":", 1) for line in exported.files["configs/spine-01/lanemap.ini"].splitlines())
    assert {f"eth{entry['index']}" for entry in ports.values()} == set(lanemap)
    assert interface_name("sonic-vs", "spine-01", "Ethernet0", {"Ethernet0": "eth1"}) == "eth1"
    with pytest.raises(ExportError, match="spine-01: port Ethernet999 is not in the switch's PORT table"):
        interface_name("sonic-vs", "spine-01", "Ethernet999", {"Ethernet0": "eth1"})


def test_the_nos_comes_from_the_plan_not_from_file_names() -> None:
    """A SONiC switch whose files are renamed is still a sonic-vs node (and a config-less one is left out)."""
    plan, switch_files, _, _ = _export("lab")
    renamed = {p.replace("spine-01/frr.conf", "spine-01/routing.txt"): t for p, t in switch_files.items()}
    assert yaml.safe_load(export_containerlab(plan, renamed).files["clab.yml"])["topology"]["nodes"][
        "spine-01"]["kind"] == "sonic-vs"
    dropped = {p: t for p, t in switch_files.items() if not p.startswith("switches/spine-01/")}
    assert "spine-01: no rendered config" in export_containerlab(plan, dropped).left_out


def test_startup_configs_are_the_rendered_configs() -> None:
    for name in ("lab", "lab-eos"):
        _, switch_files, exported, clab = _export(name)
        for node_name, node in clab["topology"]["nodes"].items():
            sources = [node["startup-config"]] if "startup-config" in node else []
            sources += [bind.split(":", 1)[0] for bind in node.get("binds", [])]
            if node["kind"] != "linux":
                assert sources, node_name
            for source in sources:
                if source.endswith(("/lanemap.ini", "/port_config.ini")):  # generated: checked above
                    continue
                rendered = "switches/" + source.removeprefix("configs/")
                assert exported.files[source] == switch_files[rendered]
        sonic = [n for n in clab["topology"]["nodes"].values() if n["kind"] == "sonic-vs"]
        for node in sonic:
            targets = {b.split(":", 1)[1] for b in node["binds"]}
            assert {"/etc/sonic/config_db.json", "/etc/frr/frr.conf"} <= targets and len(targets) == 4


def test_oob_plane_is_the_management_network() -> None:
    plan, _, _, clab = _export("lab")
    subnet = ipaddress.ip_network(clab["mgmt"]["ipv4-subnet"])
    assert str(subnet) == plan.pools["oob"]["pool"]
    addresses = [n["mgmt-ipv4"] for n in clab["topology"]["nodes"].values()]
    assert len(addresses) == len(set(addresses)) == len(clab["topology"]["nodes"])
    assert all(ipaddress.ip_address(a) in subnet for a in addresses)
    assert not [n for n in clab["topology"]["nodes"] if plan.device(n).plane == "oob"]


def test_linux_nodes_get_their_planned_addresses() -> None:
    """Every cabled interface (or bond of cabled ports) outside the oob plane gets its planned address."""
    plan, _, _, clab = _export("lab")
    addressed = 0
    for name, node in clab["topology"]["nodes"].items():
        if node["kind"] != "linux":
            continue
        cabled = {e.port for link in plan.links for e in (link.a, link.b) if e.device == name}
        assigned = {c.split()[3]: c.split()[5] for c in node.get("exec", []) if c.startswith("ip address add")}
        planned = {i.ip: i.name for i in plan.device(name).interfaces
                   if i.ip and i.plane != "oob" and (i.name in cabled or set(i.members) & cabled)}
        assert assigned == planned, name
        addressed += bool(planned)
    assert addressed == len([d for d in plan.devices if d.kind in ("server", "storage", "control")])


def test_site_hosts_are_cabled_to_the_site_access_switch() -> None:
    """ctl-01 and stor-001's mgmt0 are links to mgmt-site-1 (the control node had no link at all, and no exec
    commands, before the site access switches), and mgmt-site-1 is uplinked to the aggregation pair."""
    plan, _, _, clab = _export("lab")
    ends = {tuple(sorted(link["endpoints"])) for link in clab["topology"]["links"]}
    nodes = clab["topology"]["nodes"]
    assert nodes["mgmt-site-1"]["kind"] == "nvidia_cumulusvx"
    for host in ("ctl-01", "stor-001"):
        mgmt0 = next(i for i in plan.device(host).interfaces if i.name == "mgmt0")
        port = next(link.b.port for link in plan.links if (link.a.device, link.a.port) == (host, "mgmt0"))
        assert tuple(sorted((f"{host}:mgmt0", f"mgmt-site-1:{port}"))) in ends
        assert f"ip address add {mgmt0.ip} dev mgmt0" in nodes[host]["exec"]
    uplinks = {e for pair in ends if any(x.startswith("mgmt-site-1:") for x in pair) for e in pair
               if e.startswith("mgmt-agg-")}
    assert {e.split(":")[0] for e in uplinks} == {"mgmt-agg-1", "mgmt-agg-2"}


def test_infiniband_switches_are_left_out_with_a_reason() -> None:
    _, _, exported, clab = _export("superpod-4su")
    infiniband = [line for line in exported.left_out if "infiniband" in line]
    assert infiniband and all(line.split(":")[0] not in clab["topology"]["nodes"] for line in infiniband)


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_switches_of_the_nos_it_reads_are_enough(name: str) -> None:
    from clusterforge.export.containerlab import SWITCH_NOS
    from clusterforge.render.switches import render_switches

    plan, switch_files = example(name)
    assert export_containerlab(plan, render_switches(plan, SWITCH_NOS)) == export_containerlab(plan, switch_files)
