"""The control plane's plan (plan/control_plane.py): its members, and the one address clients name — the only
control node's API server, or with three control nodes a virtual address from the site management block that
moves no host — as `plan` shows it and as the roles, the certificates and the kubeconfigs receive it."""

from __future__ import annotations

import ipaddress
import json
import shutil
from functools import cache
from pathlib import Path

from clusterforge.loading import load_and_plan
from clusterforge.plan import Plan

REPO = Path(__file__).resolve().parents[2]


@cache
def _lab(controls: int) -> Plan:
    if controls == 1:
        return load_and_plan(REPO / "inventory" / "lab.yaml")[1]
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="cf-ha-plan-"))
    try:
        shutil.copytree(REPO / "inventory" / "catalog", tmp / "catalog")
        text = (REPO / "inventory" / "lab.yaml").read_text()
        (tmp / "lab.yaml").write_text(text.replace("control:\n  nodes: 1", f"control:\n  nodes: {controls}"))
        return load_and_plan(tmp / "lab.yaml")[1]
    finally:
        shutil.rmtree(tmp)


def test_one_control_node_is_the_api_address():
    control_plane = _lab(1).kubernetes.control_plane
    assert control_plane is not None and not control_plane.ha and control_plane.vip is None
    assert control_plane.members == (("ctl-01", "198.18.8.76"),)
    assert control_plane.server == "https://198.18.8.76:6443"


def test_three_control_nodes_get_a_virtual_address_that_moves_no_host():
    one, three = _lab(1), _lab(3)
    control_plane = three.kubernetes.control_plane
    assert control_plane is not None and control_plane.ha
    assert [n for n, _ in control_plane.members] == ["ctl-01", "ctl-02", "ctl-03"]
    assert control_plane.vip == "198.18.8.79" and control_plane.server == "https://198.18.8.79:8443"
    addresses = {d.name: [i.ip for i in d.interfaces] for d in three.devices}
    # every host of the one-control-node plan keeps every address; the new ones and the VIP are all distinct
    assert {d.name: [i.ip for i in d.interfaces] for d in one.devices} == {
        name: ips for name, ips in addresses.items() if name in {d.name for d in one.devices}}
    taken = {ip.split("/")[0] for ips in addresses.values() for ip in ips if ip}
    assert control_plane.vip not in taken
    mgmt = ipaddress.ip_interface(next(i.ip for i in three.device("ctl-01").interfaces if i.plane == "management"))
    assert ipaddress.ip_address(control_plane.vip) in mgmt.network and control_plane.prefixlen == mgmt.network.prefixlen


def test_the_roles_certificates_and_kubeconfigs_name_the_address():
    from cryptography import x509

    from clusterforge.pulumi.kube.kubeconfig import admin_kubeconfig
    from clusterforge.pulumi.kube.pki import make_bundle
    from clusterforge.render.ansible_inventory import kubernetes_vars

    plan = _lab(3)
    control_plane = plan.kubernetes.control_plane
    got = kubernetes_vars(plan)
    assert got["api_server"] == "https://198.18.8.79:8443"
    assert got["control_plane"]["members"] == got["control_nodes"] and got["control_plane"]["vip"] == "198.18.8.79"
    assert kubernetes_vars(_lab(1))["api_server"] == "https://198.18.8.76:6443"
    bundle = make_bundle(plan.cluster, [ip for _, ip in control_plane.members], plan.kubernetes.service_ip,
                         control_plane.vip)
    sans = x509.load_pem_x509_certificate(bundle["apiserver.crt"].encode()).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value.get_values_for_type(x509.IPAddress)
    assert {str(ip) for ip in sans} >= {"198.18.8.76", "198.18.8.77", "198.18.8.78", "198.18.8.79"}
    import yaml

    config = yaml.safe_load(admin_kubeconfig(plan.cluster, control_plane.server, bundle))
    assert config["clusters"][0]["cluster"]["server"] == "https://198.18.8.79:8443"
    # the nodes' playbook hands the kubelets and kube-proxy that address (roles/k8s_node's kubeconfigs)
    nodes_play = yaml.safe_load((REPO / "playbooks" / "k8s-nodes.yml").read_text())[0]
    assert nodes_play["vars"]["k8s_node_api_server"] == "{{ cf_k8s['api_server'] }}"


def test_plan_shows_the_address():
    from rich.console import Console

    from clusterforge.render.tables import kubernetes_api_table

    console = Console(width=400, record=True)
    console.print(kubernetes_api_table(_lab(3)))
    text = console.export_text()
    assert "https://198.18.8.79:8443" in text and "quorum 2" in text and "ctl-03 198.18.8.78" in text
    assert _lab(3).to_dict()["kubernetes_api"]["vip"] == "198.18.8.79"
    # `plan --format json` writes the Plan's dict (tests/unit/test_jsonstream.py runs the command)
    assert json.loads(json.dumps(_lab(1).to_dict()))["kubernetes_api"]["server"] == "https://198.18.8.76:6443"
