"""The objects a Plan puts into the source of truth (pure: no server) and the client's manners."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from clusterforge.export.devicetypes import device_types
from clusterforge.loading import load_and_plan
from clusterforge.render.switches.facts import fabric_facts
from clusterforge.sot import NautobotClient, SotError
from clusterforge.sot.desired import Ref, cluster_tag, desired
from clusterforge.sot.sync import KINDS

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def lab():
    spec, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    nos = {name: facts.nos for name, facts in fabric_facts(plan).items()}
    return plan, desired(spec, plan, device_types(spec, plan), nos)


def test_every_planned_thing_is_wanted_once(lab) -> None:
    plan, wants = lab
    kinds = Counter(w.kind for w in wants)
    assert kinds["device"] == len(plan.devices) + len(plan.pdus)
    assert kinds["cable"] == len(plan.links)
    assert kinds["rack"] == len(plan.racks)
    assert kinds["power-cable"] == len(plan.pdus)
    addresses = {i.ip for d in plan.devices for i in d.interfaces if i.ip}
    assert kinds["ip-address"] == len(addresses) and kinds["prefix"] >= len(plan.pools)
    keys = [(w.kind, w.key) for w in wants]
    assert len(keys) == len(set(keys))
    assert set(kinds) <= set(KINDS)


def test_references_point_backwards(lab) -> None:
    """Dependency order: every reference names an object wanted earlier (or a bond within the kind); a port
    without planned attributes is instantiated from its device type when the device is created."""
    _, wants = lab
    seen: set[tuple[str, tuple]] = set()
    for want in wants:
        for value in want.fields.values():
            refs = value if isinstance(value, list) else [value]
            for ref in refs:
                if not isinstance(ref, Ref) or ref.kind == want.kind:
                    continue
                if ref.kind in ("interface", "power-port"):
                    assert ("device", ref.key[:1]) in seen, (want.kind, want.key, ref)
                else:
                    assert (ref.kind, ref.key) in seen, (want.kind, want.key, ref)
        seen.add((want.kind, want.key))


def test_as_built_fields_are_written_on_create_only(lab) -> None:
    plan, wants = lab
    devices = {w.key[0]: w for w in wants if w.kind == "device"}
    for device in plan.devices:
        want = devices[device.name]
        assert want.once == {"status": "Planned", "asset_tag": device.asset_id}
        assert "serial" not in want.fields and "status" not in want.fields
        assert Ref("tag", (cluster_tag(plan),)) in want.fields["tags"]


def test_client_refuses_bad_urls_and_missing_tokens_and_hides_the_token() -> None:
    with pytest.raises(SotError, match="expected http"):
        NautobotClient("ftp://x", "t")
    with pytest.raises(SotError, match="no API token"):
        NautobotClient("http://127.0.0.1:9", "")
    client = NautobotClient("http://127.0.0.1:9", "secret-token-value")
    assert "secret-token-value" not in repr(client)
    with pytest.raises(SotError) as caught:
        client.status()
    assert "secret-token-value" not in str(caught.value) and "cannot reach" in str(caught.value)


def test_every_address_counts_towards_utilisation(lab) -> None:
    """Nautobot counts an address towards its most specific prefix only when that prefix is a network or a
    pool (a container counts child prefixes): so no address may have a container as its closest prefix."""
    import ipaddress

    plan, wants = lab
    prefixes = {ipaddress.ip_network(w.key[0]): w.fields["type"] for w in wants if w.kind == "prefix"}
    assert {str(p) for p in prefixes} >= {pool["pool"] for pool in plan.pools.values()}
    addresses = [ipaddress.ip_interface(w.key[0]) for w in wants if w.kind == "ip-address"]
    assert addresses
    for address in addresses:
        holders = [p for p in prefixes if p.version == address.version and address.ip in p]
        closest = max(holders, key=lambda p: p.prefixlen)
        assert prefixes[closest] in ("network", "pool"), (str(address), str(closest))
    assert "network" in prefixes.values()  # the lab's links and server subnets


def test_site_access_switches_and_their_cables_are_wanted(lab) -> None:
    """The site access switches (plan/site_access.py) go into the source of truth as management switches in
    the storage rack, with the site hosts' management and oob cables and their two uplinks each."""
    _, wants = lab
    devices = {w.key[0]: w for w in wants if w.kind == "device"}
    for name in ("mgmt-site-1", "oob-site-1"):
        assert devices[name].fields["role"] == Ref("role", ("management-switch",)), devices[name].fields
    cables = {tuple(sorted((w.key[0], w.key[1]))) for w in wants if w.kind == "cable"}
    for host, iface, switch in (("ctl-01", "mgmt0", "mgmt-site-1"), ("ctl-01", "bmc", "oob-site-1"),
                                ("stor-001", "mgmt0", "mgmt-site-1"), ("stor-001", "bmc", "oob-site-1")):
        assert any((host, iface) in pair and pair_has(pair, switch) for pair in cables), (host, iface)
    uplinks = [pair for pair in cables if pair_has(pair, "mgmt-site-1") and any(e[0].startswith("mgmt-agg-")
                                                                              for e in pair)]
    assert len(uplinks) == 2


def pair_has(pair: tuple, device: str) -> bool:
    return any(end[0] == device for end in pair)
