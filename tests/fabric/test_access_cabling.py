"""Every host's management and oob address sits behind a cabled access-switch port that reaches its plane's top.

Compute servers land on their rack's ToRs; storage servers and control nodes on the site access switches
(plan/site_access.py). An address no switch port answers is one nobody can reach: this walks the Plan's
links from each host interface up to the switches that answer the plane's gateway.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import pytest
from fabric_examples import REPO

from clusterforge.loading import load_and_plan
from clusterforge.model import DeclarationError
from clusterforge.vocab import DeviceKind, LinkTier, Plane

INVENTORIES = sorted(path.stem for path in (REPO / "inventory").glob("*.yaml"))
ACCESS = (Plane.MANAGEMENT, Plane.OOB)


def _plan(name: str):
    return load_and_plan(REPO / "inventory" / f"{name}.yaml")[1]


def _unreached(plan) -> list[str]:
    """Host interfaces on an access plane with an address whose cable does not lead to a gateway switch."""
    kinds = {d.name: d for d in plan.devices}
    cable = {(link.a.device, link.a.port): link for link in plan.links}
    parents: dict[str, set[str]] = defaultdict(set)
    for link in plan.links:
        if link.tier in (LinkTier.TOR_AGG, LinkTier.AGG_CORE):
            parents[link.a.device].add(link.b.device)
    tops = {plane: {hop.switch for hop in plan.gateways[plane].first_hops} for plane in ACCESS}
    out = []
    for device in plan.devices:
        if device.kind not in DeviceKind.HOSTS:
            continue
        for iface in device.interfaces:
            if iface.plane not in ACCESS or not iface.ip:
                continue
            link = cable.get((device.name, iface.name))
            switch = kinds.get(link.b.device) if link else None
            if switch is None or switch.kind != DeviceKind.MGMT_SWITCH or switch.plane != iface.plane:
                out.append(f"{device.name}:{iface.name} {iface.ip}: no cable to a {iface.plane} switch")
                continue
            seen, frontier = {switch.name}, {switch.name}
            while frontier and not seen & tops[iface.plane]:
                frontier = {p for name in frontier for p in parents[name]} - seen
                seen |= frontier
            if tops[iface.plane] and not seen & tops[iface.plane]:
                out.append(f"{device.name}:{iface.name} {iface.ip}: {switch.name} does not reach"
                           f" {sorted(tops[iface.plane])}")
    return out


@pytest.mark.parametrize("name", INVENTORIES)
def test_every_host_management_address_is_cabled(name):
    plan = _plan(name)
    hosts = [d for d in plan.devices if d.kind in DeviceKind.HOSTS]
    assert hosts
    assert _unreached(plan) == []


def test_the_walk_sees_an_uncabled_host():
    """The check fails when a host's management cable is missing (so it can fail)."""
    plan = _plan("lab")
    kept = tuple(link for link in plan.links if link.a.device != "ctl-01")
    broken = type(plan)(**{**{f: getattr(plan, f) for f in plan.__dataclass_fields__}, "links": kept})
    assert sorted(problem.split(" ")[0] for problem in _unreached(broken)) == ["ctl-01:bmc", "ctl-01:mgmt0"]


def test_site_hosts_sit_on_site_access_switches_in_stable_ports():
    """Storage server s on port s, control node i after every envelope storage server; uplinks after the ToRs'."""
    spec, plan, _ = load_and_plan(REPO / "inventory" / "lab.yaml")
    ends = {(link.a.device, link.a.port): (link.b.device, link.b.port) for link in plan.links}
    assert ends[("stor-001", "mgmt0")] == ("mgmt-site-1", "swp1")
    assert ends[("ctl-01", "mgmt0")] == ("mgmt-site-1", f"swp{spec.envelope.storage_servers_max + 1}")
    assert ends[("ctl-01", "bmc")] == ("oob-site-1", f"swp{spec.envelope.storage_servers_max + 1}")
    first_free = spec.envelope.max_sus * spec.envelope.max_racks_per_su
    assert ends[("mgmt-site-1", "swp49")] == ("mgmt-agg-1", f"swp{first_free + 1}")
    assert ends[("mgmt-site-1", "swp50")] == ("mgmt-agg-2", f"swp{first_free + 1}")


def test_a_full_aggregation_pair_grows_to_cores_that_take_the_site_access_switches(tmp_path: Path):
    """superpod-4su on SN2700s: 4 SUs x 8 racks fill an aggregation switch's 32 ports, so the envelope gets a
    second pair and the access cores, and the site access switches uplink to the cores after the aggregation
    switches' ports."""
    text = (REPO / "inventory" / "superpod-4su.yaml").read_text().replace("spine_model: sn5400, vrf: mgmt",
                                                                         "spine_model: sn2700, vrf: mgmt")
    shutil.copytree(REPO / "inventory" / "catalog", tmp_path / "catalog")
    path = tmp_path / "full.yaml"
    path.write_text(text)
    plan = load_and_plan(path)[1]
    ends = {(link.a.device, link.a.port): (link.b.device, link.b.port) for link in plan.links}
    aggs = sorted(d.name for d in plan.devices if d.name.startswith("mgmt-agg-"))
    assert aggs == ["mgmt-agg-1", "mgmt-agg-2", "mgmt-agg-3", "mgmt-agg-4"]
    assert ends[("mgmt-site-1", "swp49")] == ("mgmt-core-1", f"swp{len(aggs) + 1}")
    assert ends[("mgmt-site-1", "swp50")] == ("mgmt-core-2", f"swp{len(aggs) + 1}")
    assert _unreached(plan) == []


def test_site_access_switches_beyond_the_core_ports_are_refused_at_the_field(tmp_path: Path):
    """A core model with no port left for the site access switches is named, not left uncabled."""
    text = (REPO / "inventory" / "superpod-4su.yaml").read_text().replace(
        "spine_model: sn5400, vrf: mgmt", "spine_model: sn2700, core_model: four-port, vrf: mgmt")
    text = text.replace("catalog: {}", "catalog:\n  switches:\n    four-port: {vendor: x, description: x, ports: 4,"
                        " speed_gbps: 100, max_draw_w: 100, height_u: 1, weight_kg: 5, price: 1, source: test}", 1)
    shutil.copytree(REPO / "inventory" / "catalog", tmp_path / "catalog")
    path = tmp_path / "full.yaml"
    path.write_text(text)
    with pytest.raises(DeclarationError) as caught:
        load_and_plan(path)
    message = str(caught.value)
    assert "networks.management.core_model" in message
    assert "four-port has 4 ports and the envelope's aggregation switches take 4" in message
