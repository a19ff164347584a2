"""Host interfaces as planned: every cf_interfaces entry exists, is up (admin up and carrier), has
its planned address and MTU; a data-plane NIC reaches its leaf across the /31.

Parametrized per host and interface, so each broken interface is its own failure.
"""

from __future__ import annotations

import ipaddress

import pytest

# GPU servers and storage servers alike.
HOST_KINDS = ("server", "storage")


def _link(facts, interface):
    links = facts.links()
    assert interface["name"] in links, f"{interface['name']} does not exist (ip link)"
    return links[interface["name"]]


def test_interface_exists(facts, interface):
    _link(facts, interface)


def test_interface_up(facts, interface):
    link = _link(facts, interface)
    assert link.is_up, f"{link.name} is not up: flags {','.join(link.flags)}, operstate {link.operstate}"


def test_interface_address(facts, interface):
    link = _link(facts, interface)
    want = ipaddress.ip_interface(interface["ip"])
    have = [ipaddress.ip_interface(a) for a in link.addresses]
    assert want in have, f"{link.name} lacks its planned {want}; it has {', '.join(map(str, have)) or 'no address'}"


def test_interface_mtu(facts, interface):
    link = _link(facts, interface)
    assert link.mtu == int(interface["mtu"]), f"{link.name} MTU is {link.mtu}, planned {interface['mtu']}"


def test_data_peer_reachable(facts, interface):
    """The leaf's side of a routed /31 answers (the link carries traffic, not just carrier)."""
    if not interface.get("peer_ip"):
        pytest.skip(f"{interface['name']} ({interface.get('plane')}) has no point-to-point peer in the plan")
    _link(facts, interface)
    r = facts.run("ping -c 1 -W 2 -I %s %s", interface["name"], interface["peer_ip"])
    assert r.rc == 0, (
        f"{interface['name']}: peer {interface['peer_ip']} does not answer ping: {(r.stdout + r.stderr).strip()[-200:]}"
    )
