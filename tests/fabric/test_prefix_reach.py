"""The plan refuses a subnet answered by a switch that does not attach all its hosts, at the field that places them."""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from pathlib import Path

import pytest

from clusterforge.model import load_cluster
from clusterforge.plan import plan_cluster
from clusterforge.plan.prefix_reach import black_holes, prefix_problems, storage_pair_problems
from clusterforge.vocab import DeviceKind, Plane

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.stem for p in (REPO / "inventory").glob("*.yaml"))


def _planned(name: str):
    spec, source = load_cluster(REPO / "inventory" / f"{name}.yaml")
    return source, plan_cluster(spec)


def _one_server_subnet(plan):
    """The earlier layout: one storage-server subnet, answered by every storage spine, whatever its cabling."""
    servers = [d for d in plan.devices if d.kind == DeviceKind.STORAGE]
    spines = [d for d in plan.devices if d.plane == Plane.STORAGE and d.kind == DeviceKind.SPINE]
    first = ipaddress.ip_interface(next(i.ip for i in servers[0].interfaces if i.name == "bond0"))
    site = first.network.supernet(prefixlen_diff=(len(spines) // 2 - 1).bit_length())
    hosts = list(site.hosts())

    def readdress(device, offset):
        ifaces = tuple(dataclasses.replace(i, ip=f"{hosts[offset]}/{site.prefixlen}", gateway=str(hosts[0]))
                       if i.plane == Plane.STORAGE and (i.name == "bond0" or i.name.startswith("Vlan")) else i
                       for i in device.interfaces)
        return dataclasses.replace(device, interfaces=ifaces)

    moved = {d.name: readdress(d, 15 + n) for n, d in enumerate(servers)}
    moved |= {d.name: readdress(d, 1 + n) for n, d in enumerate(spines)}
    return dataclasses.replace(plan, devices=tuple(moved.get(d.name, d) for d in plan.devices))


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_answer_every_subnet_where_its_hosts_are(name):
    assert prefix_problems(_planned(name)[1]) == []


@pytest.mark.parametrize("name", ["superpod-4su", "dgx-b200-su", "roce-128gpu"])
def test_one_server_subnet_on_every_spine_is_refused_at_storage_servers(name):
    source, plan = _planned(name)
    problems = black_holes(_one_server_subnet(plan))
    assert problems, "a server subnet on spines the server is not cabled to went unnoticed"
    located = str(source.problem(*problems[0]))
    assert re.match(rf".*inventory/{name}\.yaml:\d+:\d+: storage\.servers: the storage plane: stor-spine-\d+ .*"
                    r"answers \S+, the subnet of stor-\d+:bond0, but is not cabled to it", located), located


def test_the_two_spine_layout_is_the_one_subnet_layout():
    """With one spine pair the one server subnet is the pair's: nothing to refuse, nothing renumbered."""
    _, plan = _planned("lab")
    assert black_holes(_one_server_subnet(plan)) == []


def test_server_pairs_sharing_an_asn_are_refused():
    source, plan = _planned("superpod-4su")
    asn = next(d.asn for d in plan.devices if d.name == "stor-spine-01")
    same = tuple(dataclasses.replace(d, asn=asn) if d.plane == Plane.STORAGE and d.kind == DeviceKind.SPINE else d
                 for d in plan.devices)
    problems = storage_pair_problems(dataclasses.replace(plan, devices=same))
    assert len(problems) == 1
    located = str(source.problem(*problems[0]))
    assert re.match(r".*superpod-4su\.yaml:\d+:\d+: storage\.servers: .* share ASN", located), located
