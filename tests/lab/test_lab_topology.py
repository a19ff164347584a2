"""LabTopology validation (no root needed)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from clusterforge.lab import LabHost, LabInterface, LabRoute, LabSegment, LabTopology, names


def _if(name, seg, ip, mtu=1500):
    return LabInterface(name=name, segment=seg, ip=ip, mtu=mtu)


def _topo(**kw):
    base = dict(
        name="t",
        segments=[LabSegment(name="mgmt"), LabSegment(name="d0", kind="p2p", mtu=9000)],
        hosts=[
            LabHost(
                name=n,
                interfaces=[
                    _if("mgmt0", "mgmt", f"198.18.8.{k}/24"),
                    _if("rail0", "d0", f"198.18.0.{k - 1}/31", 9000),
                ],
            )
            for k, n in ((1, "a"), (2, "b"))
        ],
        control=LabInterface(segment="mgmt", ip="198.18.8.254/24"),
    )  # fmt: skip
    base.update(kw)
    return LabTopology(**base)


def test_valid_and_frozen():
    t = _topo()
    assert t.management_ip("a") == "198.18.8.1"
    with pytest.raises(ValidationError):
        t.name = "x"  # type: ignore[misc]
    assert LabTopology.model_validate_json(t.model_dump_json()) == t


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"control": LabInterface(segment="d0", ip="198.18.0.9/31")}, "bridge segment"),
        ({"control": LabInterface(segment="mgmt", ip="198.18.8.1/24")}, "already used"),
        ({"segments": [LabSegment(name="mgmt"), LabSegment(name="d0", kind="p2p", mtu=1500)]}, "exceeds"),
        ({"hosts": []}, "exactly 2 endpoints"),
    ],
)
def test_rejects_inconsistent(kw, msg):
    with pytest.raises(ValidationError, match=msg):
        _topo(**kw)


def test_interface_names_and_cidr():
    with pytest.raises(ValidationError, match="15"):
        LabInterface(name="a-very-long-ifname0", segment="m", ip="10.0.0.1/24")
    with pytest.raises(ValidationError, match="prefix"):
        LabInterface(segment="m", ip="10.0.0.1")
    with pytest.raises(ValidationError, match="DNS label"):
        LabHost(name="Bad.Name")


def test_short_names_fit_and_are_stable():
    for lab in ("lab", "x" * 32):
        for n in (names.bridge_name(lab, "management"), names.veth_peer_name(lab, "su99-r99-gpu99", "rail7")):
            assert len(n) <= 15 and n.startswith(names.link_prefix(lab))
    assert names.bridge_name("lab", "mgmt") == names.bridge_name("lab", "mgmt")
    assert names.bridge_name("lab", "mgmt") != names.bridge_name("lab2", "mgmt")
    assert not names.netns_name("a-b", "x").startswith(names.netns_prefix("a"))


def test_routes_validated_and_normalised():
    r = LabRoute(dst="198.18.0.5/22", via="198.18.0.0", dev="rail0")
    assert r.dst == "198.18.0.0/22"
    with pytest.raises(ValidationError, match="via and/or dev"):
        LabRoute(dst="default")
    with pytest.raises(ValidationError, match="unknown interface"):
        LabHost(name="a", routes=[LabRoute(dst="default", dev="mgmt0")])


def test_control_extra_placed_by_subnet_and_reachability():
    t = _topo(
        segments=[LabSegment(name="mgmt"), LabSegment(name="oob"), LabSegment(name="d0", kind="p2p", mtu=9000)],
        hosts=[
            LabHost(name="a", interfaces=[_if("mgmt0", "mgmt", "198.18.8.1/24"),
                                          _if("r", "d0", "198.18.0.0/31", 9000)]),
            LabHost(name="sw", kind="router", interfaces=[_if("eth0", "oob", "198.18.14.5/24"),
                                                          _if("r", "d0", "198.18.0.1/31", 9000)]),
        ],
        control_extra=("198.18.14.254/24", "198.18.9.1/24"),
    )  # fmt: skip
    assert t.control_addresses() == [
        ("198.18.8.254/24", "mgmt"),
        ("198.18.14.254/24", "oob"),
        ("198.18.9.1/24", "mgmt"),  # no host in that subnet: stays on the control segment
    ]
    assert t.reachable_ip("a") == "198.18.8.1" and t.reachable_ip("sw") == "198.18.14.5"
    with pytest.raises(ValidationError, match="already used"):
        _topo(control_extra=("198.18.8.2/24",))


def test_storage_servers_get_a_brick_dir_and_every_server_fuse():
    from pathlib import Path

    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.loading import load_and_plan

    spec, plan, _ = load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")
    topo = lab_topology(plan)
    servers = {h.name: h for h in topo.hosts if h.kind == "server"}
    storage = {d.name for d in plan.devices if d.kind == "storage"}
    assert storage and {n: h.data_dirs for n, h in servers.items() if n in storage} == {n: ("/srv/bricks",)
                                                                                      for n in storage}
    # Kubernetes nodes (the GPU servers) keep containerd's state on the machine's file system and run a kubelet
    nodes = {n.name for n in plan.kubernetes.nodes}
    assert nodes and {n: h.data_dirs for n, h in servers.items() if n in nodes} == {n: ("/var/lib/containerd",)
                                                                                    for n in nodes}
    assert {n for n, h in servers.items() if h.kubelet} == nodes
    assert all(h.fuse for h in servers.values()) and all(not h.data_dirs for n, h in servers.items()
                                                         if n not in storage | nodes)
    assert not any(h.fuse or h.data_dirs or h.kubelet for h in topo.hosts if h.kind == "router")


@pytest.mark.parametrize("path", ["srv/bricks", "/srv/bricks:/etc", "/srv/../etc", "/srv/b ricks", "/"])
def test_data_dirs_refuse_paths_nspawn_would_misread(path):
    with pytest.raises(ValidationError):
        LabHost(name="h1", data_dirs=(path,))


def test_site_hosts_are_on_the_management_bridge_with_their_gateway_on_the_control_endpoint():
    """The plan cables ctl-01 and stor-001 to mgmt-site-1; the lab's management bridge stands for every
    management switch, so their mgmt0 sits on it, routes by default via the planned gateway, and that
    gateway is a control address (the lab machine answers the management plane's external gateway)."""
    from pathlib import Path

    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.loading import load_and_plan

    _, plan, _ = load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")
    topo = lab_topology(plan)
    hosts = {h.name: h for h in topo.hosts}
    controls = {address.split("/")[0] for address, segment in topo.control_addresses() if segment == "mgmt"}
    site = [d for d in plan.devices if d.kind in ("storage", "control")]
    assert {d.kind for d in site} == {"storage", "control"}
    for device in site:
        planned = next(i for i in device.interfaces if i.plane == "management")
        cable = next(link for link in plan.links if (link.a.device, link.a.port) == (device.name, planned.name))
        assert cable.b.device == "mgmt-site-1"
        host = hosts[device.name]
        assert [(i.segment, i.ip) for i in host.interfaces if i.name == planned.name] == [("mgmt", planned.ip)]
        assert [(r.via, r.dev) for r in host.routes if r.dst == "default"] == [(planned.gateway, planned.name)]
        assert planned.gateway in controls
