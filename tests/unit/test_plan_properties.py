"""Property tests of the planner: identity, addressing and facility invariants over generated clusters."""

from __future__ import annotations

import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from netaddr import IPAddress, IPNetwork

from clusterforge.model import ClusterSpec, ScalableUnit, load_cluster
from clusterforge.plan import Plan, PlanError, plan_cluster

BASE = Path(__file__).parent.parent / "data" / "prop-base.yaml"


@lru_cache(maxsize=1)
def base_spec() -> ClusterSpec:
    with tempfile.TemporaryDirectory() as scratch:  # catalog_files must stay inside the inventory's directory
        shutil.copytree(BASE.parents[2] / "inventory" / "catalog", Path(scratch) / "catalog")
        copy = Path(scratch) / BASE.name
        copy.write_text(BASE.read_text().replace("../../inventory/catalog/", "catalog/"))
        return load_cluster(copy)[0]


def with_units(units: list[ScalableUnit], spine_groups: int = 1) -> ClusterSpec:
    spec = base_spec()
    if spine_groups != 1:  # rail-group spines: one group per rail (max_rails 2)
        data = spec.networks.data.model_copy(update={"spine_groups": spine_groups})
        spec = spec.model_copy(update={"networks": spec.networks.model_copy(update={"data": data})})
    return spec.model_copy(update={"scalable_units": units})


@st.composite
def unit(draw, su_id: int) -> ScalableUnit:
    racks = draw(st.integers(1, 4))
    per_rack = draw(st.integers(1, 3))
    nodes = draw(st.integers(1, min(8, racks * per_rack)))
    return ScalableUnit(id=su_id, server_model="hgx-h200-2gpu", nodes=nodes, racks=racks, nodes_per_rack=per_rack)


@st.composite
def clusters(draw) -> list[ScalableUnit]:
    ids = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4, unique=True))
    return [draw(unit(su_id)) for su_id in ids]


def _addresses(plan: Plan) -> list[tuple[str, str, str]]:
    return [(d.name, i.name, i.ip) for d in plan.devices for i in d.interfaces if i.ip]


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(clusters())
def test_no_two_interfaces_share_an_address(units):
    plan = plan_cluster(with_units(units))
    seen: dict[str, tuple[str, str]] = {}
    for device, iface, ip in _addresses(plan):
        address = ip.split("/")[0]
        assert address not in seen, f"{device}:{iface} and {seen[address]} share {address}"
        seen[address] = (device, iface)
    for pdu in plan.pdus:
        if pdu.ip:
            assert pdu.ip.split("/")[0] not in seen
            seen[pdu.ip.split("/")[0]] = (pdu.name, "nic")


@SETTINGS
@given(clusters())
def test_every_address_stays_inside_its_planes_pool(units):
    spec = with_units(units)
    plan = plan_cluster(spec)
    nets = spec.networks
    pools = {plane: IPNetwork(nets.plane(plane).supernet) for plane in ("data", "storage", "management", "oob")}
    links, loops = IPNetwork(nets.fabric_links), IPNetwork(nets.loopbacks)
    for device in plan.devices:
        for iface in device.interfaces:
            if not iface.ip:
                continue
            address = IPAddress(iface.ip.split("/")[0])
            allowed = [pools[iface.plane]]
            if device.kind in ("leaf", "spine", "core") and iface.plane in ("data", "storage"):
                allowed += [links, loops]
            assert any(address in pool for pool in allowed), f"{device.name}:{iface.name} {address} leaks"
            others = [p for name, p in pools.items() if name != iface.plane]
            assert not any(address in pool for pool in others)


@SETTINGS
@given(clusters(), st.integers(1, 6), st.sampled_from((1, 2)))
def test_adding_an_su_changes_nothing_that_exists(units, new_id, spine_groups):
    assume(new_id not in {u.id for u in units})  # an SU id already taken is not an addition
    before = plan_cluster(with_units(units, spine_groups))
    after = plan_cluster(with_units([*units, ScalableUnit(id=new_id, server_model="hgx-h200-2gpu", nodes=8,
                                                          racks=4, nodes_per_rack=2)], spine_groups))
    new = {d.name: d for d in after.devices}
    for device in before.devices:
        assert device.name in new, f"{device.name} vanished"
        moved = new[device.name]
        assert (moved.rack, moved.ru, moved.asn, moved.loopback) == (device.rack, device.ru, device.asn,
                                                                      device.loopback)
        old_ips = {(i.name, i.ip) for i in device.interfaces}
        new_ips = {(i.name, i.ip) for i in moved.interfaces}
        assert old_ips <= new_ips, f"{device.name} renumbered: {old_ips - new_ips}"
        if device.kind in ("server", "leaf", "storage"):
            assert old_ips == new_ips
    after_links = {(link.a, link.b, link.a_ip, link.b_ip) for link in after.links}
    for link in before.links:
        assert (link.a, link.b, link.a_ip, link.b_ip) in after_links


@SETTINGS
@given(clusters())
def test_every_server_psu_set_reaches_both_feeds(units):
    plan = plan_cluster(with_units(units))
    for device in plan.devices:
        if device.kind in ("server", "storage"):
            assert set(device.psu_feeds) == {"A", "B"}, device.name
    for rack in plan.racks:
        assert {p.split("-pdu-")[1].rstrip("0123456789") for p in rack.pdus} == {"a", "b"}


@SETTINGS
@given(clusters())
def test_no_rack_exceeds_capacity_less_headroom(units):
    spec = with_units(units)
    try:
        plan = plan_cluster(spec)
    except PlanError as exc:  # refusing is allowed; it must say by how much
        assert all("exceeds" in message for _, message in exc.problems)
        return
    headroom = spec.site.facility.headroom
    for rack in plan.racks:
        assert rack.power_w <= rack.capacity_w * (1 - headroom) + 1e-6, rack.name


def test_overloaded_rack_is_refused_with_watts_over():
    spec = with_units([ScalableUnit(id=1, server_model="hgx-h200-2gpu", nodes=8, racks=1, nodes_per_rack=8)])
    try:
        plan_cluster(spec)
    except PlanError as exc:
        messages = [m for _, m in exc.problems]
        assert any("rack su01-r01" in m and "W exceeds its budget" in m and " by " in m for m in messages)
    else:
        raise AssertionError("8 x 2.2 kW in a 14.7 kW rack budget must be refused")


def test_su_removal_leaves_a_hole():
    units = [ScalableUnit(id=i, server_model="hgx-h200-2gpu", nodes=2, racks=1) for i in (1, 2, 3)]
    full = {d.name: d for d in plan_cluster(with_units(units)).devices}
    holed = plan_cluster(with_units([units[0], units[2]]))
    assert not any(d.su == 2 for d in holed.devices)
    for device in holed.devices:
        assert {i.ip for i in device.interfaces} <= {i.ip for i in full[device.name].interfaces}
