"""plan/kubernetes.py and the declaration rules of `kubernetes:`: per-node pod blocks from stable ids (adding an SU
renumbers no node), overlay MACs every node derives alike, ranges disjoint from the planes, sized for the envelope."""

from __future__ import annotations

import ipaddress
import shutil
from pathlib import Path

import pytest
import yaml

from clusterforge.loading import DeclarationError, load_and_plan

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "inventory" / "lab.yaml"


def _plan(text: str, tmp_path: Path):
    path = tmp_path / "lab.yaml"
    path.write_text(text)
    if not (tmp_path / "catalog").exists():
        shutil.copytree(ROOT / "inventory" / "catalog", tmp_path / "catalog")
    return load_and_plan(path)[1]


def _errors(text: str, tmp_path: Path) -> str:
    with pytest.raises(DeclarationError) as refused:
        _plan(text, tmp_path)
    return str(refused.value)


def test_every_gpu_server_gets_its_own_block_inside_the_pod_range():
    plan = load_and_plan(LAB)[1]
    k8s = plan.kubernetes
    assert k8s is not None and len(k8s.nodes) == sum(1 for d in plan.devices if d.kind == "server" and d.gpus)
    pods = ipaddress.ip_network(k8s.pod_cidr)
    blocks = [ipaddress.ip_network(n.pod_cidr) for n in k8s.nodes]
    assert all(b.subnet_of(pods) and b.prefixlen == 24 for b in blocks)
    assert len(set(blocks)) == len(blocks)
    assert len({n.overlay_mac for n in k8s.nodes}) == len(k8s.nodes)
    assert all(n.overlay_mac.startswith("02:cf:") for n in k8s.nodes)  # locally administered, unicast
    assert k8s.service_ip == str(ipaddress.ip_network(k8s.service_cidr)[1])
    assert k8s.overlay_mtu == plan.plane("management").mtu - 50


def test_adding_an_su_renumbers_no_node(tmp_path):
    text = LAB.read_text()
    before = {n.name: n.pod_cidr for n in _plan(text, tmp_path).kubernetes.nodes}
    data = yaml.safe_load(text)
    data["scalable_units"].append({**data["scalable_units"][0], "id": 2})
    after = {n.name: n.pod_cidr for n in _plan(yaml.safe_dump(data), tmp_path).kubernetes.nodes}
    assert len(after) == 2 * len(before)
    assert {name: after[name] for name in before} == before


def test_a_pod_range_overlapping_a_plane_is_refused_at_its_line(tmp_path):
    text = LAB.read_text().replace("pod_cidr: 198.18.32.0/20", "pod_cidr: 198.18.8.0/21")
    message = _errors(text, tmp_path)
    assert "kubernetes.pod_cidr" in message and "overlaps" in message
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "supernet: 198.18.8.0/24" in ln)
    assert f"lab.yaml:{line}:" in message  # the plane's line names the clash


def test_a_pod_range_too_small_for_the_envelope_is_refused(tmp_path):
    text = LAB.read_text().replace("pod_cidr: 198.18.32.0/20", "pod_cidr: 198.18.32.0/23")
    message = _errors(text, tmp_path)
    assert "kubernetes.pod_cidr" in message and "node blocks" in message


def test_a_service_range_larger_than_the_api_server_takes_is_refused(tmp_path):
    text = LAB.read_text().replace("service_cidr: 198.18.48.0/24", "service_cidr: 100.0.0.0/8")
    assert "kubernetes.service_cidr" in _errors(text, tmp_path)


def test_kubernetes_settings_without_kubernetes_are_refused(tmp_path):
    text = LAB.read_text().replace("schedulers: [kubernetes, slurm]", "schedulers: [slurm]")
    assert "kubernetes settings are never applied" in _errors(text, tmp_path)


def test_the_cluster_dns_is_the_tenth_service_address_with_two_replicas_and_no_forwarders():
    from clusterforge.plan.kubernetes import cluster_dns_ip, plan_cluster_dns

    assert cluster_dns_ip("10.96.0.0/12") == "10.96.0.10" and cluster_dns_ip("198.18.48.0/24") == "198.18.48.10"
    assert [plan_cluster_dns("198.18.48.0/24", (), n).replicas for n in (0, 1, 2, 4)] == [1, 1, 2, 2]
    dns = load_and_plan(LAB)[1].kubernetes.dns
    assert dns is not None and (dns.ip, dns.domain, dns.forwarders, dns.replicas) == (
        "198.18.48.10", "cluster.local", (), 2)  # the lab forwards nowhere


def test_declared_dns_forwarders_reach_the_plan(tmp_path):
    text = LAB.read_text().replace("  kueue: true\n", "  kueue: true\n  dns_forwarders: [198.18.8.1, 198.18.8.2]\n")
    assert _plan(text, tmp_path).kubernetes.dns.forwarders == ("198.18.8.1", "198.18.8.2")


@pytest.mark.parametrize(("value", "says"), [
    ("'8.8.8.8 ; rm'", "not an IPv4 address"), ("127.0.0.1", "not a unicast host address"),
    ("010.1.1.1", "not an IPv4 address"), ("198.18.48.53", "inside service_cidr"),
    ("198.18.32.9", "inside pod_cidr"), ("'{{ x }}'", "not an IPv4 address")])
def test_a_hostile_or_looping_dns_forwarder_is_refused_at_its_line(tmp_path, value, says):
    text = LAB.read_text().replace("  kueue: true\n", f"  kueue: true\n  dns_forwarders: [198.18.8.1, {value}]\n")
    message = _errors(text, tmp_path)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "dns_forwarders" in ln)
    assert f"lab.yaml:{line}:" in message and "dns_forwarders" in message and says in message, message


def test_a_forwarder_declared_twice_is_refused(tmp_path):
    text = LAB.read_text().replace("  kueue: true\n", "  kueue: true\n  dns_forwarders: [198.18.8.1, 198.18.8.1]\n")
    assert "declared twice" in _errors(text, tmp_path)
