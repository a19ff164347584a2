"""Every gateway (or routed next hop) a host is given is configured on a switch it is cabled to,
directly or through its plane's L2 access switches, unless the declaration hands that plane's
gateway to an external router, in which case the rendered tree and the report say who must
provide it. Addresses are read back from the rendered files (gateway_reach.py), per NOS."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from functools import cache

import pytest
from fabric_examples import EXAMPLES, REPO, example
from gateway_reach import answered_addresses, check_gateways, host_hops
from golden_cases import CASES, with_nos

from clusterforge.loading import load_and_plan
from clusterforge.model import DeclarationError, load_cluster
from clusterforge.plan import PlanError, plan_cluster
from clusterforge.render.gateways import render_gateways
from clusterforge.render.report.ipplan import ip_plan_view
from clusterforge.render.switches import switch_tree
from clusterforge.render.switches.sonic_yang import sonic_yang_problems
from clusterforge.vocab import DeviceKind, GatewayMethod, Plane


@cache
def _checked(name: str):
    _, plan, _ = example(name)
    per_switch, _ = switch_tree(plan, workers=1)
    return plan, per_switch, check_gateways(plan, per_switch)


def _cabled(hops):
    return [h for h in hops if h.switches]


INVENTORIES = sorted(path.stem for path in (REPO / "inventory").glob("*.yaml"))  # every example, not only EXAMPLES


def test_every_example_is_checked():
    assert {"lab", "lab-metal", "roce-128gpu", "superpod-4su", "dgx-b200-su", "gb200-nvl72-su"} <= set(INVENTORIES)


@pytest.mark.parametrize("name", INVENTORIES)
def test_every_host_gateway_is_answered_by_a_switch_it_reaches(name):
    """Every gateway and routed next hop of every host (GPU servers, storage servers' mgmt0 and bmc, control
    nodes) is cabled and either configured on a switch the host reaches or declared external."""
    plan, _, (answered, unanswered, external) = _checked(name)
    assert [f"{h.host}:{h.interface} {h.address}" for h in unanswered] == []
    assert [f"{h.host}:{h.interface}" for h in external if not h.switches] == []
    assert answered, "no host gateway checked at all"
    hosts = {h.host for h in answered + external}
    assert {d.name for d in plan.devices if d.kind in DeviceKind.HOSTS and d.management_ip} <= hosts


def _without_links(plan, host: str):
    kept = tuple(link for link in plan.links if host not in (link.a.device, link.b.device))
    return dataclasses.replace(plan, links=kept)


@pytest.mark.parametrize("host", ["ctl-01", "stor-001"])
def test_an_uncabled_site_host_is_named(host):
    """The check fails when a control node's or storage server's cables are missing (so it can fail)."""
    plan, per_switch, _ = _checked("lab")
    _, unanswered, external = check_gateways(_without_links(plan, host), per_switch)
    uncabled = {f"{h.host}:{h.interface}" for h in unanswered + external if not h.switches}
    assert {f"{host}:mgmt0", f"{host}:bmc"} <= uncabled


def _with_control_nodes(tmp_path, name: str, nodes: int = 3):
    shutil.copytree(REPO / "inventory" / "catalog", tmp_path / "catalog")
    path = tmp_path / f"{name}.yaml"
    path.write_text((REPO / "inventory" / f"{name}.yaml").read_text()
                    + f"\ncontrol:\n  nodes: {nodes}\n  server_model: control-1u\n")
    plan = load_and_plan(path)[1]
    per_switch, _ = switch_tree(plan, workers=1)
    return plan, per_switch


def test_control_nodes_gateways_are_answered_by_the_vrrp_pair(tmp_path):
    """roce-128gpu with three control nodes: their mgmt0 and bmc reach the aggregation pair's VRRP gateway
    through the site access switches (the examples that declare control nodes have external gateways)."""
    plan, per_switch = _with_control_nodes(tmp_path, "roce-128gpu")
    answered, unanswered, _ = check_gateways(plan, per_switch)
    controls = [h for h in answered if h.host.startswith("ctl-")]
    assert {(h.host, h.interface) for h in controls} == {
        (f"ctl-0{i}", iface) for i in (1, 2, 3) for iface in ("mgmt0", "bmc")}
    assert all({"mgmt-site-1", "mgmt-agg-1"} <= set(h.switches) for h in controls if h.interface == "mgmt0")
    assert unanswered == []
    # and with the aggregation pair's VRRP addresses gone from its rendered files, they are unanswered
    site_gw = {h.address for h in controls if h.interface == "mgmt0"}
    assert len(site_gw) == 1
    broken = {name: dict(files) for name, files in per_switch.items()}
    for name in ("mgmt-agg-1", "mgmt-agg-2"):
        gone = re.compile(re.escape(next(iter(site_gw))) + r"(?![\d.])")
        broken[name] = {f: gone.sub("192.0.2.99", t) for f, t in broken[name].items()}
    _, unanswered, _ = check_gateways(plan, broken)
    missed = {(h.host, h.interface) for h in unanswered}
    assert {(f"ctl-0{i}", "mgmt0") for i in (1, 2, 3)} <= missed
    assert any(host.startswith("stor-") for host, iface in missed if iface == "mgmt0")


def test_lab_access_planes_are_external_and_named_in_tree_and_report():
    plan, _, (_, unanswered, external) = _checked("lab")
    assert {h.plane for h in external} == {Plane.MANAGEMENT, Plane.OOB}
    assert not _cabled(unanswered)
    rows = render_gateways(plan)["gateways.csv"].splitlines()
    mgmt = [r for r in rows if r.startswith("management,")]
    assert mgmt and all(r.endswith(",external,the lab machine ctl0,,yes") for r in mgmt)
    summary = {g["plane"]: g for g in ip_plan_view(plan)["gateways"]}
    assert summary["oob"]["external"] and summary["oob"]["provider"] == "the lab machine ctl0"
    assert summary["storage"]["switches"] and not summary["storage"]["external"]


def test_methods_per_plane():
    assert {p: g.method for p, g in example("roce-128gpu")[1].gateways.items()} == {
        Plane.DATA: GatewayMethod.ROUTED, Plane.STORAGE: GatewayMethod.ANYCAST,
        Plane.MANAGEMENT: GatewayMethod.VRRP, Plane.OOB: GatewayMethod.VRRP}
    assert example("superpod-4su")[1].gateways[Plane.DATA].method == GatewayMethod.NONE  # InfiniBand


def test_vrrp_pair_has_one_master_and_every_envelope_block():
    plan = example("superpod-4su")[1]
    hops = plan.gateways[Plane.MANAGEMENT].first_hops
    by_switch: dict[str, set] = {}
    for hop in hops:
        by_switch.setdefault(hop.switch, set()).add((hop.vip, hop.priority))
    assert len(by_switch) == 2
    priorities = sorted({p for pairs in by_switch.values() for _, p in pairs})
    assert priorities == [100, 200]
    vips = {v for v, _ in next(iter(by_switch.values()))}
    assert set(plan.gateways[Plane.MANAGEMENT].gateways) <= {v.split("/")[0] for v in vips}
    assert len(vips) == 4 + 1  # max_sus SU blocks and the site block: adding an SU changes no config


def test_sonic_storage_pair_uses_static_anycast_gateway_and_passes_yang():
    _, _, files = example("superpod-4su")
    db = json.loads(files["switches/su01-stor-leaf-1/config_db.json"])
    assert db["SAG"] == {"GLOBAL": {"gateway_mac": "02:cf:00:00:00:6e"}}
    assert db["VLAN_INTERFACE"]["Vlan110"] == {"static_anycast_gateway": "true"}
    assert "Vlan110|10.110.0.1/26" in db["VLAN_INTERFACE"]
    assert sonic_yang_problems(files["switches/su01-stor-leaf-1/config_db.json"]) == []


@pytest.mark.parametrize("name", EXAMPLES)
def test_sonic_anycast_svis_always_come_with_the_sag_mac(name):
    """sonic-vlan.yang's `must` (which the repository checker does not evaluate): an SVI with
    static_anycast_gateway "true" needs SAG|GLOBAL gateway_mac in the same config."""
    _, _, files = example(name)
    checked = 0
    for path, text in files.items():
        if path.endswith("config_db.json"):
            db = json.loads(text)
            if any(v.get("static_anycast_gateway") == "true" for v in db.get("VLAN_INTERFACE", {}).values()):
                assert db["SAG"]["GLOBAL"]["gateway_mac"], path
                checked += 1
    assert checked or name == "roce-128gpu"  # roce-128gpu's storage is Cumulus


def test_sonic_access_plane_gets_a_single_gateway_and_a_warning():
    spec, _ = load_cluster(REPO / "inventory" / "roce-128gpu.yaml")
    plan = plan_cluster(with_nos(spec, "sonic", (Plane.MANAGEMENT,)))
    assert plan.gateways[Plane.MANAGEMENT].method == GatewayMethod.SINGLE
    assert any("SONiC has no VRRP model" in w for w in plan.warnings)
    per_switch, _ = switch_tree(plan, workers=1)
    _, unanswered, _ = check_gateways(plan, per_switch)
    assert _cabled(unanswered) == []
    for name in {h.switch for h in plan.gateways[Plane.MANAGEMENT].first_hops}:
        assert sonic_yang_problems(per_switch[name]["config_db.json"]) == []


def test_the_check_fails_when_a_rendered_gateway_is_missing():
    plan, per_switch, _ = _checked("roce-128gpu")
    broken = {name: dict(files) for name, files in per_switch.items()}
    for name in ("su01-stor-leaf-1", "su01-stor-leaf-2"):
        broken[name]["startup.yaml"] = broken[name]["startup.yaml"].replace("10.16.0.1/26", "10.16.0.9/26")
    _, unanswered, _ = check_gateways(plan, broken)
    assert {h.address for h in unanswered if h.switches} == {"10.16.0.1"}


def test_answered_addresses_reads_each_nos():
    eos = ("interface Vlan30\n   ip address 10.0.0.2/24\n   vrrp 1 ipv4 10.0.0.1\n   vrrp 1 ipv4 10.0.1.1 secondary\n"
           "   ip virtual-router address 10.0.2.1\n!\ninterface Management1\n   ip address 192.0.2.5/24\n")
    assert answered_addresses("eos", {"running-config": eos}) == {"10.0.0.2", "10.0.0.1", "10.0.1.1", "10.0.2.1"}
    sonic = json.dumps({"VLAN_INTERFACE": {"Vlan20": {}, "Vlan20|10.0.0.1/24": {}},
                        "MGMT_INTERFACE": {"eth0|192.0.2.5/24": {}}})
    assert answered_addresses("sonic", {"config_db.json": sonic}) == {"10.0.0.1"}


def test_every_host_hop_names_the_switches_it_reaches():
    plan = example("roce-128gpu")[1]
    hop = next(h for h in host_hops(plan) if h.plane == Plane.MANAGEMENT)
    assert hop.switches[0].endswith("-mgmt") and {"mgmt-agg-1", "mgmt-agg-2"} <= set(hop.switches)


def test_an_external_data_plane_is_refused_at_its_field():
    spec, _ = load_cluster(REPO / "inventory" / "roce-128gpu.yaml")
    data = spec.networks.data.model_copy(update={"gateway": spec.networks.data.gateway.model_copy(
        update={"provider": "external"})})
    with pytest.raises(PlanError) as err:
        plan_cluster(spec.model_copy(update={"networks": spec.networks.model_copy(update={"data": data})}))
    assert err.value.problems[0][0] == ("networks", "data", "gateway", "provider")


def test_external_provider_name_has_a_grammar(tmp_path):
    text = (REPO / "inventory" / "lab.yaml").read_text().replace(
        "by: the lab machine ctl0}", "by: \"x{{ lookup('pipe','id') }}\"}", 1)
    shutil.copytree(REPO / "inventory" / "catalog", tmp_path / "catalog")
    path = tmp_path / "lab.yaml"
    path.write_text(text)
    with pytest.raises(DeclarationError) as err:
        load_cluster(path)
    assert "networks.management.gateway.by" in str(err.value)


def test_goldens_cover_vrrp_and_varp():
    assert CASES["roce-128gpu-eos"].switches is not None and "mgmt-agg-1" in CASES["roce-128gpu-eos"].switches
