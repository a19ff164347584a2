"""The plan's InfiniBand planes as simulator subnets (plan/ib_subnet.py), their net file, and the pure comparison
of what the diagnostics find (ibcheck/compare.py): counts equal the plan's, GUIDs stable, a swap named."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from clusterforge.ibcheck.compare import (
    Discovered,
    Tables,
    compare_links,
    parse_dump_fts,
    parse_ibnetdiscover,
    parse_pkeys,
    parse_sminfo,
    planned_ends,
    unreachable_pairs,
)
from clusterforge.loading import load_and_plan
from clusterforge.plan import Plan
from clusterforge.plan.ib_subnet import IbCable, IbSubnet, SimLimits, ib_subnets, node_guid
from clusterforge.render.switches._infiniband.ibsim import ibsim_net

ROOT = Path(__file__).resolve().parents[2]
IB_EXAMPLES = ("dgx-b200-su", "superpod-4su", "gb200-nvl72-su")


@cache
def _plan(name: str) -> Plan:
    return load_and_plan(ROOT / "inventory" / f"{name}.yaml")[1]


@pytest.mark.parametrize("name", IB_EXAMPLES)
def test_the_subnet_holds_every_planned_switch_hca_and_cable(name):
    plan = _plan(name)
    (subnet,) = ib_subnets(plan)
    links = [link for link in plan.links if link.plane == subnet.plane]
    switches = {d.name for d in plan.devices if d.plane == subnet.plane and d.kind in ("leaf", "spine", "core")}
    hca_ports = {(e.device, e.port) for link in links for e in (link.a, link.b) if e.device not in switches}
    kinds = Counter(n.kind for n in subnet.nodes)
    assert subnet.left_out is None
    assert kinds == {"switch": len(switches), "hca": len(hca_ports)}
    assert len(subnet.cables) == len(links) == subnet.planned_cables
    assert {n.device for n in subnet.nodes if n.kind == "switch"} == switches
    # every port used once, every switch port within its model's port count
    ends = [end for cable in subnet.cables for end in (cable.a, cable.b)]
    assert len(ends) == len(set(ends))
    ports = {n.node_id: n.ports for n in subnet.nodes}
    assert all(1 <= port <= ports[node] for node, port in ends)


def test_no_subnet_without_an_infiniband_plane():
    assert ib_subnets(_plan("roce-128gpu")) == ()


def test_guids_are_stable_unique_and_leave_the_low_byte_for_ports():
    (one,) = ib_subnets(_plan("dgx-b200-su"))
    (again,) = ib_subnets(load_and_plan(ROOT / "inventory" / "dgx-b200-su.yaml")[1])
    assert [n.guid for n in one.nodes] == [n.guid for n in again.nodes]
    guids = [n.guid for n in one.nodes]
    assert len(set(guids)) == len(guids)
    assert all(g & 0xFF == 0 for g in guids)
    leaf = one.node("su01-leaf-rail0")
    assert leaf.guid == node_guid("data", "switch", "su01-leaf-rail0")
    assert node_guid("storage", "switch", "su01-leaf-rail0") != leaf.guid


def test_the_sm_sits_on_the_top_tier_and_leads_the_net_file():
    (subnet,) = ib_subnets(_plan("dgx-b200-su"))
    assert subnet.sm_node.tier == "spine"
    net = ibsim_net(subnet)
    first = next(line for line in net.splitlines() if line.startswith(("Switch", "Ca")))
    assert f'"{subnet.sm_node.node_id}"' in first


def test_the_net_file_lists_each_cable_from_both_ends():
    (subnet,) = ib_subnets(_plan("dgx-b200-su"))
    net = ibsim_net(subnet)
    port_lines = [line for line in net.splitlines() if line.startswith("[")]
    assert len(port_lines) == 2 * len(subnet.cables)
    assert net.count("switchguid=") == 24 and net.count("caguid=") == 256
    cable = subnet.cables[0]
    assert any(line.startswith(f'[{cable.b[1]}]\t"{cable.a[0]}"[{cable.a[1]}]') for line in port_lines)


def test_a_plane_larger_than_the_simulator_keeps_whole_sus_and_says_so():
    (full,) = ib_subnets(_plan("superpod-4su"))
    per_su = Counter(n.su for n in full.nodes)
    top = per_su[None]
    limits = SimLimits(nodes=top + per_su[1] + per_su[2] + 5)
    (part,) = ib_subnets(_plan("superpod-4su"), limits)
    assert {n.su for n in part.nodes} == {None, 1, 2}
    assert part.left_out is not None and "SUs 3, 4" in part.left_out
    assert len(part.nodes) <= limits.nodes
    kept = {n.node_id for n in part.nodes}
    assert all(c.a[0] in kept and c.b[0] in kept for c in part.cables)
    assert part.planned_nodes == len(full.nodes)


def _discovered_as_planned(subnet: IbSubnet, cables: tuple[IbCable, ...] | None = None) -> Discovered:
    kinds = {n.guid: ("Switch" if n.kind == "switch" else "Ca", n.ports) for n in subnet.nodes}
    return Discovered(kinds, frozenset(planned_ends(subnet, cables)))


def test_links_as_planned_differ_in_nothing():
    (subnet,) = ib_subnets(_plan("dgx-b200-su"))
    diff = compare_links(subnet, _discovered_as_planned(subnet))
    assert (diff.planned, diff.discovered, diff.missing, diff.unexpected, diff.miswired) == (512, 512, (), (), ())


def test_a_swapped_pair_is_named_as_a_swap():
    (subnet,) = ib_subnets(_plan("dgx-b200-su"))
    a, b = subnet.cables[0], subnet.cables[1]
    swapped = (IbCable(a.a, b.b, a.a_name, b.b_name), IbCable(b.a, a.b, b.a_name, a.b_name), *subnet.cables[2:])
    diff = compare_links(subnet, _discovered_as_planned(subnet, swapped))
    assert len(diff.missing) == 2 and len(diff.unexpected) == 2
    (swap,) = diff.miswired
    assert swap.startswith("swapped: planned") and a.a_name in swap and b.b_name in swap


def test_a_missing_cable_is_missing_and_not_a_swap():
    (subnet,) = ib_subnets(_plan("dgx-b200-su"))
    diff = compare_links(subnet, _discovered_as_planned(subnet, subnet.cables[1:]))
    assert diff.missing == (" <-> ".join(sorted((subnet.cables[0].a_name, subnet.cables[0].b_name))),)
    assert diff.unexpected == () and diff.miswired == ()


def _tiny() -> tuple[IbSubnet, Discovered]:
    """Two leaves under one spine, one HCA on each leaf."""
    from clusterforge.plan.ib_subnet import IbNode

    def sw(name: str, tier: str) -> IbNode:
        return IbNode(name, "switch", name, None, 4, node_guid("data", "switch", name), None, tier)

    def hca(name: str) -> IbNode:
        return IbNode(f"{name}/rail0", "hca", name, "rail0", 1, node_guid("data", "hca", name, "rail0"), 1, "server")

    nodes = (sw("spine", "spine"), sw("leaf1", "leaf"), sw("leaf2", "leaf"), hca("h1"), hca("h2"))
    cables = (IbCable(("leaf1", 1), ("spine", 1), "leaf1:1", "spine:1"),
              IbCable(("leaf2", 1), ("spine", 2), "leaf2:1", "spine:2"),
              IbCable(("h1/rail0", 1), ("leaf1", 2), "h1:rail0", "leaf1:2"),
              IbCable(("h2/rail0", 1), ("leaf2", 2), "h2:rail0", "leaf2:2"))
    subnet = IbSubnet("data", nodes, cables, 5, 4, None)
    return subnet, _discovered_as_planned(subnet)


def test_routing_is_complete_only_when_the_tables_carry_every_pair():
    subnet, found = _tiny()
    spine, leaf1, leaf2, h1, h2 = (n.guid for n in subnet.nodes)
    # LIDs: h1 = 1, h2 = 2
    owner = {1: h1 + 1, 2: h2 + 1}
    good = Tables({leaf1: {1: 2, 2: 1}, leaf2: {1: 1, 2: 2}, spine: {1: 1, 2: 2}}, owner)
    assert unreachable_pairs(subnet, found, good) == []
    # the spine sends h2's LID back down to leaf1: h1 no longer reaches h2 (a loop, not a route)
    looped = Tables({leaf1: {1: 2, 2: 1}, leaf2: {1: 1, 2: 2}, spine: {1: 1, 2: 1}}, owner)
    assert unreachable_pairs(subnet, found, looped) == [("h1/rail0", "h2/rail0")]
    # a pulled spine cable: the tables still point at it
    pulled = Discovered(found.nodes, frozenset(link for link in found.links if (spine, 2) not in link))
    assert set(unreachable_pairs(subnet, pulled, good)) == {("h1/rail0", "h2/rail0"), ("h2/rail0", "h1/rail0")}


IBNETDISCOVER = """\
switchguid=0xcf10000000000300(cf10000000000300)
Switch\t4 "S-cf10000000000300"\t\t# "leaf/a" base port 0 lid 2 lmc 0
[2]\t"S-cf10000000000100"[1]\t\t# "spine-01" lid 1 4xHDR
[3]\t"H-cf20000000000400"[1](cf20000000000401) \t\t# "h2/rail0" lid 4 4xHDR

caguid=0xcf20000000000400
Ca\t1 "H-cf20000000000400"\t\t# "h2/rail0"
[1](cf20000000000401) \t"S-cf10000000000300"[3]\t\t# lid 4 lmc 0 "leaf/a" lid 2 4xHDR
"""

DUMP_FTS = """\
Unicast lids [0x0-0x4] of switch DR path slid 0; dlid 0; 0,1 guid 0xcf10000000000300 (leaf/a):
  Lid  Out   Destination
       Port     Info
0x0001 002 : (Switch portguid 0xcf10000000000100: 'spine-01')
0x0004 003 : (Channel Adapter portguid 0xcf20000000000401: 'h2/rail0')
2 valid lids dumped
"""


def test_the_diagnostics_output_parses():
    found = parse_ibnetdiscover(IBNETDISCOVER)
    assert found.nodes == {0xCF10000000000300: ("Switch", 4), 0xCF20000000000400: ("Ca", 1)}
    assert frozenset({(0xCF10000000000300, 3), (0xCF20000000000400, 1)}) in found.links
    assert len(found.links) == 2
    tables = parse_dump_fts(DUMP_FTS)
    assert tables.lfts == {0xCF10000000000300: {1: 2, 4: 3}}
    assert tables.lid_owner[4] == 0xCF20000000000401
    assert parse_sminfo("sminfo: sm lid 1 sm guid 0xcf1, activity count 9 priority 15 state 3 SMINFO_MASTER") == (
        15, "MASTER")
    assert parse_sminfo("ibwarn: no answer") == (None, "UNKNOWN")
    pktr = "PKeyTableRecord dump:\n\t\tLID........................30\n\t\tPKey Table:\n\t\t0xffff 0x8064 0x0000\n"
    assert parse_pkeys(pktr) == {0xFFFF, 0x8064}


@pytest.mark.parametrize("name", ["has#hash", "at@sign", 'quote"d', "sp ace", "x" * 65, ""])
def test_a_name_the_simulator_cannot_quote_is_refused(name):
    from clusterforge.plan.ib_subnet import _checked_id

    with pytest.raises(ValueError, match="not a simulator node id"):
        _checked_id(name)
