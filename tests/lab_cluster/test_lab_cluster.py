"""inventory/lab.yaml as real hosts: reachable over SSH on planned addresses, the routed data fabric
converged, planes reachable as the plan says and isolated from each other."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from clusterforge.lab import names

pytestmark = [pytest.mark.lab]


def ssh(lab, host: str, command: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["ssh", "-F", str(lab.ssh_config), "-o", "BatchMode=yes", host, command],
                            capture_output=True, text=True, timeout=60)
    if check and result.returncode:
        raise AssertionError(f"{host}: {command!r} exited {result.returncode}: {result.stderr.strip()}")
    return result


def _plan():
    from clusterforge.loading import load_and_plan

    return load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")[1]


PLAN = _plan()
ROUTERS = [d.name for d in PLAN.devices if d.kind in ("leaf", "spine") and d.plane in ("data", "storage")]
SERVERS = [d.name for d in PLAN.devices if d.kind == "server"]


@pytest.mark.parametrize("host", SERVERS + ["stor-001"] + ROUTERS)
def test_every_host_answers_ssh_with_its_own_name(lab_cluster, host):
    assert ssh(lab_cluster, host, "hostname").stdout.strip() == host


@pytest.mark.parametrize("host", SERVERS)
def test_management_address_is_the_planned_one(lab_cluster, host):
    planned = next(i.ip for i in PLAN.device(host).interfaces if i.plane == "management")
    shown = json.loads(ssh(lab_cluster, host, "ip -j addr show dev mgmt0").stdout)
    assert planned in {f"{a['local']}/{a['prefixlen']}" for a in shown[0]["addr_info"]}


def _bgp_sessions(lab, router: str, planned: set[str]) -> dict[str, str]:
    for _ in range(30):  # FRR may still be opening sessions right after boot
        out = json.loads(ssh(lab, router, "vtysh -c 'show bgp summary json'").stdout or "{}")
        peers = out.get("ipv4Unicast", {}).get("peers", {})
        if planned <= set(peers) and all(peers[ip].get("state") == "Established" for ip in planned):
            break
        subprocess.run(["sleep", "2"])
    return {ip: p.get("state") for ip, p in peers.items()}


@pytest.mark.parametrize("router", ROUTERS)
def test_every_planned_bgp_session_is_established(lab_cluster, router):
    planned = set()
    for link in PLAN.links:  # switch-to-switch links are the BGP sessions; a peer's address is its end's
        if link.a_ip and link.tier.endswith("-spine"):
            if link.a.device == router:
                planned.add(link.b_ip.split("/")[0])
            elif link.b.device == router:
                planned.add(link.a_ip.split("/")[0])
    sessions = _bgp_sessions(lab_cluster, router, planned)
    assert planned and planned <= set(sessions), f"planned {planned}, running {sessions}"
    # spines also hold sessions for the envelope's unbuilt SUs; those wait for their leaves
    assert {ip: sessions[ip] for ip in planned if sessions[ip] != "Established"} == {}


def test_data_plane_rails_route_between_servers_through_the_fabric(lab_cluster):
    a, b = SERVERS[0], SERVERS[-1]
    for rail in (0, 1):
        target = next(i.ip for i in PLAN.device(b).interfaces if i.rail == rail).split("/")[0]
        result = ssh(lab_cluster, a, f"ping -c1 -W2 -I rail{rail} {target}", check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        hops = ssh(lab_cluster, a, f"ip route get {target} oif rail{rail}").stdout
        assert f"dev rail{rail}" in hops


def test_storage_server_is_reached_over_the_storage_plane(lab_cluster):
    storage_ip = next(i.ip for i in PLAN.device("stor-001").interfaces if i.plane == "storage").split("/")[0]
    assert ssh(lab_cluster, SERVERS[0], f"ping -c1 -W2 {storage_ip}", check=False).returncode == 0
    assert "dev bond0" in ssh(lab_cluster, SERVERS[0], f"ip route get {storage_ip}").stdout


def test_management_answers_between_servers(lab_cluster):
    other = next(i.ip for i in PLAN.device(SERVERS[1]).interfaces if i.plane == "management").split("/")[0]
    assert ssh(lab_cluster, SERVERS[0], f"ping -c1 -W2 -I mgmt0 {other}", check=False).returncode == 0


def test_data_addresses_are_not_reachable_over_management(lab_cluster):
    target = next(i.ip for i in PLAN.device(SERVERS[1]).interfaces if i.plane == "data").split("/")[0]
    result = ssh(lab_cluster, SERVERS[0], f"ping -c1 -W2 -I mgmt0 {target}", check=False)
    assert result.returncode != 0, "a data-plane address answered on the management plane"


def test_management_and_data_never_share_a_bridge(lab_cluster):
    lab = lab_cluster.name
    topology = lab_cluster.topology
    bridges = {s.name: names.bridge_name(lab, s.name) for s in topology.segments if s.kind == "bridge"}
    members: dict[str, set[str]] = {}
    for seg, bridge in bridges.items():
        out = subprocess.run(["ip", "-j", "link", "show", "master", bridge], capture_output=True, text=True)
        members[seg] = {entry["ifname"] for entry in json.loads(out.stdout or "[]")}
    assert members["mgmt"], "the management bridge has no ports"
    planes = {}
    for host in topology.hosts:
        for iface in host.interfaces:
            planes.setdefault(iface.segment, set()).add(iface.name)
    assert not any(name.startswith("rail") for name in planes["mgmt"])
    data_segments = {s for s, ifs in planes.items() if any(n.startswith("rail") for n in ifs)}
    assert data_segments and not (data_segments & set(bridges)), "data NICs must not sit on a bridge"
