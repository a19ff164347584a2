"""check_fabric: clean on the examples, and each invariant catches its own kind of mistake."""

from __future__ import annotations

import dataclasses

import pytest
from fabric_examples import EXAMPLES, example

from clusterforge.plan import Plan
from clusterforge.plan.fabric_checks import check_fabric
from clusterforge.plan.objects import Endpoint


@pytest.mark.parametrize("inventory", EXAMPLES)
def test_examples_have_no_fabric_problems(inventory):
    assert check_fabric(example(inventory)[1]) == []


def lab() -> Plan:
    return example("lab")[1]


def with_links(plan: Plan, links) -> Plan:
    return dataclasses.replace(plan, links=tuple(links))


def _index(plan: Plan, predicate) -> int:
    return next(i for i, link in enumerate(plan.links) if predicate(link))


def _with_a_leaf_spine_link(**changes) -> list[str]:
    """The fabric problems of the lab plan with its first data leaf-spine link changed so."""
    plan = lab()
    links = list(plan.links)
    i = _index(plan, lambda link: link.tier == "data-leaf-spine")
    links[i] = dataclasses.replace(links[i], **changes)
    return check_fabric(with_links(plan, links))


def test_a_port_used_twice_is_reported():
    plan = lab()
    links = list(plan.links)
    first = _index(plan, lambda link: link.tier == "node-leaf" and link.plane == "data")
    second = first + 2  # the next server's NIC on the same rail leaf
    assert links[second].b.device == links[first].b.device
    links[second] = dataclasses.replace(links[second], b=links[first].b)
    problems = check_fabric(with_links(plan, links))
    assert any(f"port {links[first].b.device}:{links[first].b.port} is used by 2 links" in p for p in problems)


def test_ends_disagreeing_on_speed_are_reported():
    problems = _with_a_leaf_spine_link(speed_gbps=400)
    assert any("runs at 800 Gb/s, the link at 400 Gb/s" in p for p in problems)


def test_a_link_mtu_off_its_plane_is_reported():
    problems = _with_a_leaf_spine_link(mtu=1500)
    assert any("MTU 1500 but the data plane's MTU is 9000" in p for p in problems)


def test_a_link_address_not_on_the_interface_is_reported():
    assert any("the link says 198.18.4.99/31" in p for p in _with_a_leaf_spine_link(a_ip="198.18.4.99/31"))


def test_a_link_across_planes_is_reported():
    plan = lab()
    links = list(plan.links)
    i = _index(plan, lambda link: link.tier == "tor-agg" and link.plane == "management")
    links[i] = dataclasses.replace(links[i], b=Endpoint("spine-01", "Ethernet504"))
    assert any("planes are never bridged" in p for p in check_fabric(with_links(plan, links)))


@pytest.mark.parametrize("plane", ["data", "storage"])
def test_an_uncabled_server_nic_is_reported(plane):
    plan = lab()
    i = _index(plan, lambda link: link.tier == "node-leaf" and link.plane == plane)
    dropped = plan.links[i]
    links = plan.links[:i] + plan.links[i + 1:]
    problems = check_fabric(with_links(plan, links))
    assert f"{dropped.a.device}:{dropped.a.port} ({plane}) has 0 links; every {plane} NIC needs exactly one" \
        in problems


def test_oversubscription_above_the_declared_ratio_is_refused():
    plan = lab()
    leaf = "su01-leaf-rail0"
    uplinks = [link for link in plan.links if link.a.device == leaf and link.tier == "data-leaf-spine"]
    links = [link for link in plan.links if link not in uplinks[1:]]  # keep 1 of 4 x 800G uplinks
    problems = check_fabric(with_links(plan, links))
    assert f"data leaf {leaf} is oversubscribed 2:1 (1600 Gb/s down, 800 Gb/s up); the plane declares 1:1" \
           " (1 leaf switches above it)" in problems


def test_a_leaf_without_uplinks_is_reported():
    plan = lab()
    leaf = "su01-leaf-rail1"
    links = [link for link in plan.links if not (link.a.device == leaf and link.tier == "data-leaf-spine")]
    assert any(f"{leaf} has downlinks but no uplinks" in p for p in check_fabric(with_links(plan, links)))
