"""Bare-metal servers taken out of the container lab: their segments become bridges, their NICs keep the plan."""

from __future__ import annotations

import pytest

from clusterforge.lab import names
from clusterforge.lab.from_plan import lab_topology
from clusterforge.lab.metal_topology import split, vm_mac
from clusterforge.loading import load_and_plan
from clusterforge.render import render_tree

SERVER = "su01-r01-gpu01"


@pytest.fixture(scope="module")
def topology():
    _, plan, _ = load_and_plan("inventory/lab.yaml")
    return lab_topology(plan, render_tree(plan))


def test_the_server_leaves_the_container_lab(topology):
    rest, (metal,) = split(topology, [SERVER])
    assert SERVER not in {h.name for h in rest.hosts}
    assert len(rest.hosts) == len(topology.hosts) - 1
    assert metal.name == SERVER


def test_its_nics_are_the_planned_interfaces_management_first(topology):
    planned = topology.host(SERVER)
    _, (metal,) = split(topology, [SERVER])
    assert metal.nics[0].name == "mgmt0"
    assert {n.name: n.ip for n in metal.nics} == {i.name: i.ip for i in planned.interfaces}
    assert {n.bridge for n in metal.nics} == {names.bridge_name(topology.name, i.segment) for i in planned.interfaces}
    assert [(r.dst, r.via, r.dev, r.metric) for r in metal.routes] == [
        (r.dst, r.via, r.dev, r.metric) for r in planned.routes]


def test_its_point_to_point_links_become_bridges_the_routers_keep(topology):
    planned = topology.host(SERVER)
    rest, _ = split(topology, [SERVER])
    for iface in planned.interfaces:
        seg = rest.segment(iface.segment)
        assert seg.kind == "bridge"
        if iface.name.startswith("rail"):  # the leaf's end of the old veth is still there, now a bridge port
            assert any(i.segment == iface.segment for h in rest.hosts for i in h.interfaces)


def test_macs_are_stable_unicast_and_distinct(topology):
    _, (metal,) = split(topology, [SERVER])
    macs = [n.mac for n in metal.nics]
    assert len(set(macs)) == len(macs)
    assert all(m.startswith("52:54:00:") for m in macs)
    assert vm_mac(topology.name, SERVER, "mgmt0") == metal.nics[0].mac


def test_unknown_or_non_server_hosts_are_refused(topology):
    with pytest.raises(ValueError, match="not servers"):
        split(topology, ["spine-01"])
    with pytest.raises(ValueError, match="not servers"):
        split(topology, ["nope"])


def test_the_provisioning_subnet_is_the_highest_free_24_of_the_lab_block():
    import netaddr

    from clusterforge.pulumi.metal import LAB_BLOCK, provisioning_subnet

    _, plan, _ = load_and_plan("inventory/lab.yaml")
    subnet = netaddr.IPNetwork(provisioning_subnet(plan))
    assert subnet.prefixlen == 24 and subnet in LAB_BLOCK
    used = [netaddr.IPNetwork(i.ip) for d in plan.devices for i in d.interfaces if i.ip]
    assert not any(u.cidr in subnet or subnet in u.cidr for u in used)
    assert str(subnet) == "198.19.255.0/24"  # nothing of inventory/lab.yaml is that high
