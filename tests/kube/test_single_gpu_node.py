"""A cluster with one GPU node (inventory/lab-metal.yaml's): the k8s_gpu role applies its layer and taints that
node, against a real kube-apiserver on loopback. With one node the role's read of the GPU nodes by name got a
Node back from kubectl instead of a List, and its taint step failed ("'method' object is not iterable"), in
the metal lab's `up`; the read now lists the nodes."""

from __future__ import annotations

import pytest

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import CoreV1Api  # noqa: E402
from layer_helpers import REPO_ROOT, apply_layer  # noqa: E402

from clusterforge.pulumi.kube.teardown import api_client  # noqa: E402


def test_one_gpu_node_is_labelled_and_tainted(loopback_api, tmp_path):
    from clusterforge.loading import load_and_plan
    from clusterforge.render.ansible_inventory import kubernetes_vars

    _, plan, _ = load_and_plan(REPO_ROOT / "inventory" / "lab-metal.yaml")
    kube_vars = kubernetes_vars(plan)
    assert len(kube_vars["gpu_nodes"]) == 1
    node = kube_vars["gpu_nodes"][0]
    core = CoreV1Api(api_client(loopback_api.kubeconfig))
    try:  # a node as a kubelet registers it: no taints of its own
        core.create_node(kubernetes.client.V1Node(metadata=kubernetes.client.V1ObjectMeta(name=node["name"])))
    except kubernetes.client.exceptions.ApiException as exc:
        if exc.status != 409:
            raise
    for run in ("first", "second"):  # and again: nothing to change, no failure
        (tmp_path / run).mkdir()
        apply_layer(loopback_api, tmp_path / run, kube_vars)
    taints = {(t.key, t.value, t.effect) for t in core.read_node(node["name"]).spec.taints or []}
    planned = {(t["key"], str(t["value"]), t["effect"]) for t in node.get("taints", [])} or None
    assert planned is None or planned <= taints, (planned, taints)
    assert taints, "the role put no taint on the GPU node"
