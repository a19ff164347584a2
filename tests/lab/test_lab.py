"""Real lab hosts: nspawn containers with systemd + sshd, bridges, a p2p data link, FRR."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from clusterforge.lab import LabError, LabTopology, down, names, ssh_command, status, up
from clusterforge.lab.container import tcp_banner

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def _ip_json(host, *args: str) -> list[dict]:
    return json.loads(host.check_output("ip -j " + " ".join(args)))


def test_every_host_has_planned_identity_and_interfaces(lab, lab_topology, lab_hosts):
    for h in lab_topology.hosts:
        host = lab_hosts[h.name]
        assert host.check_output("hostname") == h.name
        assert host.service("ssh").is_running
        links = {link["ifname"]: link for link in _ip_json(host, "addr", "show")}
        for i in h.interfaces:
            assert i.name in links, f"{h.name}: {i.name} missing"
            assert links[i.name]["mtu"] == i.mtu
            assert "UP" in links[i.name]["flags"]
            have = {f"{a['local']}/{a['prefixlen']}" for a in links[i.name]["addr_info"]}
            assert i.ip in have, f"{h.name}/{i.name}: {i.ip} not in {have}"
        planned = {i.name for i in h.interfaces} | {"lo"}
        assert set(links) == planned, f"{h.name}: unplanned interfaces {set(links) - planned}"


def test_machine_ids_and_host_keys_are_per_host(lab, lab_topology, lab_hosts):
    ids = {lab_hosts[h.name].check_output("cat /etc/machine-id") for h in lab_topology.hosts}
    keys = {lab_hosts[h.name].check_output("cat /etc/ssh/ssh_host_ed25519_key.pub").split()[1]
            for h in lab_topology.hosts}  # fmt: skip
    assert len(ids) == len(keys) == len(lab_topology.hosts)


def test_systemd_boots_cleanly(lab, lab_topology, lab_hosts):
    for h in lab_topology.hosts:
        host = lab_hosts[h.name]
        state = host.run("systemctl is-system-running --wait").stdout.strip()
        failed = host.check_output("systemctl --failed --no-legend --plain")
        assert state == "running", f"{h.name}: {state}; failed units: {failed}"


def test_management_reachable_between_servers(lab, lab_hosts):
    assert lab_hosts["srv1"].run("ping -c1 -W2 198.19.24.12").rc == 0
    assert lab_hosts["srv3"].run("ping -c1 -W2 198.19.24.11").rc == 0


def test_data_address_only_on_data_segment(lab, lab_hosts):
    # rtr1 and srv1 share the p2p data link: jumbo frames pass without fragmentation
    assert lab_hosts["rtr1"].run("ping -c1 -W2 -M do -s 8972 198.19.16.1").rc == 0
    # srv2 is only on mgmt (and storage): srv1's data address must not be reachable from it
    assert lab_hosts["srv2"].run("ping -c1 -W1 198.19.16.1").rc != 0
    # nor from the control node, which sits on the management bridge only (sshd listens there)
    assert tcp_banner("198.19.24.11") and not tcp_banner("198.19.16.1")


def test_jumbo_storage_bridge(lab, lab_hosts):
    assert lab_hosts["srv2"].run("ping -c1 -W2 -M do -s 8972 198.19.28.13").rc == 0
    # 1500-byte management path does not carry jumbo frames
    assert lab_hosts["srv2"].run("ping -c1 -W1 -M do -s 8972 198.19.24.13").rc != 0


def test_mgmt_and_data_never_share_a_bridge(lab, lab_topology):
    lab_name = lab_topology.name
    out = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True, check=True).stdout
    ports: dict[str, set[str]] = {}
    for link in json.loads(out):
        if link["ifname"].startswith(names.link_prefix(lab_name)) and link.get("master"):
            ports.setdefault(link["master"], set()).add(link["ifname"])
    by_seg = {s.name: names.bridge_name(lab_name, s.name) for s in lab_topology.segments if s.kind == "bridge"}
    # every bridge port belongs to exactly the hosts planned on that segment
    for seg, br in by_seg.items():
        expect = {
            names.veth_peer_name(lab_name, h.name, i.name)
            for h in lab_topology.hosts for i in h.interfaces if i.segment == seg
        }  # fmt: skip
        assert ports.get(br, set()) == expect, seg
    # p2p (data) segments have no bridge at all, and no bridge carries two segments
    assert len(set(by_seg.values())) == len(by_seg)
    for seg in lab_topology.segments:
        if seg.kind == "p2p":
            assert names.bridge_name(lab_name, seg.name) not in ports


def test_frr_runs_on_routers_and_peers(lab, lab_hosts):
    for name in ("rtr1", "rtr2"):
        rtr = lab_hosts[name]
        assert rtr.service("frr").is_running
        assert rtr.process.filter(comm="bgpd")
        assert rtr.check_output("sysctl -n net.ipv4.ip_forward") == "1"
    conf = lab_hosts["rtr1"].check_output("vtysh -c 'show running-config'")
    assert "router bgp 65100" in conf and "neighbor 198.19.16.1 remote-as 65101" in conf
    # rtr1 <-> rtr2 over their p2p fabric link: the session comes up
    deadline, state = time.monotonic() + 60, None
    while time.monotonic() < deadline:
        out = lab_hosts["rtr1"].check_output("vtysh -c 'show bgp neighbors 198.19.20.1 json'")
        state = json.loads(out).get("198.19.20.1", {}).get("bgpState")
        if state == "Established":
            break
        time.sleep(1)
    assert state == "Established"
    # servers do not run FRR
    assert not lab_hosts["srv1"].service("frr").is_running


def test_planned_routes_installed(lab, lab_hosts):
    assert "via 198.19.16.0 dev rail0 metric 100" in lab_hosts["srv1"].check_output("ip route show 198.19.16.0/22")
    assert "default via 198.19.24.254 dev mgmt0" in lab_hosts["srv2"].check_output("ip route show default")
    assert lab_hosts["srv3"].check_output("ip route show default") == ""


def test_control_extra_address_sits_on_its_own_bridge(lab, lab_topology):
    def addrs(segment: str) -> set[str]:
        out = subprocess.run(
            ["ip", "-j", "addr", "show", "dev", names.bridge_name(lab_topology.name, segment)],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        return {f"{a['local']}/{a['prefixlen']}" for link in json.loads(out) for a in link["addr_info"]}

    assert "198.19.30.254/24" in addrs("oob") and "198.19.30.254/24" not in addrs("mgmt")
    assert "198.19.24.254/24" in addrs("mgmt")
    assert tcp_banner("198.19.30.1")  # rtr1 is managed over oob
    assert lab_topology.reachable_ip("rtr2") is None  # rtr2 only through its namespace (ProxyCommand)


def test_status_reports_every_host(lab, lab_topology):
    rows = {r.host: r for r in status(lab_topology)}
    assert set(rows) == {h.name for h in lab_topology.hosts}
    for h in lab_topology.hosts:
        r = rows[h.name]
        assert r.state == "running" and r.sshd
        for i in h.interfaces:
            assert i.ip in r.addresses[i.name]


def test_second_up_changes_nothing(lab, lab_topology):
    pids = {r.host: r.pid for r in status(lab_topology)}
    again = up(lab_topology)
    assert not again.changed and again.started == []
    assert {r.host: r.pid for r in status(lab_topology)} == pids


def test_up_refuses_a_different_topology_while_running(lab, lab_topology):
    data = lab_topology.model_dump()
    data["hosts"] = [h for h in data["hosts"] if h["name"] != "srv3"]
    changed = LabTopology.model_validate(data)
    with pytest.raises(LabError, match="different topology"):
        up(changed)
    assert all(r.state == "running" for r in status(lab_topology))


def test_up_refuses_a_second_lab_with_the_same_control_addresses(lab, lab_topology):
    from lab_fixtures import leftovers, small_topology

    twin = small_topology("cftwin")
    try:
        with pytest.raises(LabError, match=r"lab 'cftest' is running .*198\.19\.24\.254/24 on cf\w+ overlaps"):
            up(twin)
        assert not leftovers(twin.name)["netns"]
    finally:
        down(twin.name)
    assert all(r.state == "running" for r in status(lab_topology))


def test_host_whose_nspawn_died_is_seen_and_rebooted(lab, lab_topology):
    """SIGKILL on nspawn leaves the host's systemd running: status says so, and `up` boots it cleanly."""
    import os
    import signal

    before = {r.host: r for r in status(lab_topology)}
    os.kill(before["srv3"].pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and {r.host: r for r in status(lab_topology)}["srv3"].state == "running":
        time.sleep(0.2)
    after = {r.host: r for r in status(lab_topology)}["srv3"]
    assert after.state == "orphaned", after
    again = up(lab_topology)
    assert again.started == ["srv3"]
    rows = {r.host: r for r in status(lab_topology)}
    assert rows["srv3"].state == "running" and rows["srv3"].sshd and rows["srv3"].pid != before["srv3"].pid
    assert all(rows[h].pid == before[h].pid for h in rows if h != "srv3")


def test_ssh_command_with_strict_host_keys(lab, lab_topology):
    argv = ssh_command(lab_topology, "srv3", ["cat", "/etc/hostname"])
    p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout.strip() == "srv3", p.stderr
    cfg = lab.ssh_config.read_text()
    assert "StrictHostKeyChecking yes" in cfg and "StrictHostKeyChecking no" not in cfg


def test_down_cleans_up_after_a_crashed_up(lab, lab_topology):
    """A second lab whose `up` died half-way (state file lost) is still removed completely."""
    from lab_fixtures import leftovers, small_topology

    from clusterforge.lab import links, netns

    crashed = small_topology("cfcrash")
    # simulate: network half made, no state file, no containers
    netns.ensure(names.netns_name(crashed.name, "srv1"))
    for seg in crashed.segments:
        if seg.kind == "bridge":
            links.ensure_bridge(crashed.name, seg)
    i = crashed.host("srv1").interfaces[0]
    links.ensure_bridge_port(
        crashed.name,
        links.Endpoint("srv1", names.netns_name(crashed.name, "srv1"), i),
        crashed.segment(i.segment),
    )
    assert any(leftovers(crashed.name).values())
    down(crashed.name)
    assert not any(leftovers(crashed.name).values()), leftovers(crashed.name)
    # the running lab was not touched
    assert all(r.state == "running" for r in status(lab_topology))
