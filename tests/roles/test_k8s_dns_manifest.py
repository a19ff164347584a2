"""roles/k8s_dns's objects (templates/coredns.yaml.j2) against the Kubernetes schemas, strict, and its Corefile:
a forward block only where the plan gives somewhere to forward to (the lab: none, no packet leaves 198.18.0.0/15).
Rendered with Ansible's own templar and the role's defaults (no playbook run)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

kubernetes_validate = pytest.importorskip("kubernetes_validate")

ROLE = Path(__file__).resolve().parents[2] / "roles" / "k8s_dns"
KUBERNETES_VERSION = "1.31"


def _render(**overrides: object) -> list[dict]:
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    variables = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    variables |= {"ansible_managed": "Ansible managed", "k8s_dns_ip": "198.18.48.10", "k8s_dns_replicas": 2,
                  "k8s_dns_image": "198.18.8.2:5000/clusterforge/coredns:1.14.7",
                  "k8s_dns_tolerations": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}
    variables |= overrides
    templar = Templar(loader=DataLoader(), variables=variables)
    text = templar.template(trust_as_template((ROLE / "templates" / "coredns.yaml.j2").read_text()))
    return [d for d in yaml.safe_load_all(text) if d]


def _corefile(docs: list[dict]) -> str:
    return next(d for d in docs if d["kind"] == "ConfigMap")["data"]["Corefile"]


def test_every_object_is_valid_and_kube_dns_has_the_planned_address():
    docs = _render()
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    kinds = {d["kind"]: d for d in docs}
    assert set(kinds) == {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment", "Service"}
    service = kinds["Service"]
    assert service["metadata"]["name"] == "kube-dns" and service["spec"]["clusterIP"] == "198.18.48.10"
    pod = kinds["Deployment"]["spec"]["template"]["spec"]
    assert kinds["Deployment"]["spec"]["replicas"] == 2
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    rules = {r: set(rule["verbs"]) for rule in kinds["ClusterRole"]["rules"] for r in rule["resources"]}
    assert all(rules[r] == {"list", "watch"} for r in ("endpointslices", "services", "namespaces", "pods"))


def test_the_lab_forwards_nowhere_a_site_to_its_resolvers_or_the_nodes():
    assert "forward" not in _corefile(_render()) and "kubernetes cluster.local" in _corefile(_render())
    assert "forward . 192.0.2.53 192.0.2.54 {" in _corefile(_render(k8s_dns_forwarders=["192.0.2.53", "192.0.2.54"]))
    assert "forward . /etc/resolv.conf {" in _corefile(_render(k8s_dns_forward_node_resolvers=True))
