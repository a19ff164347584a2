"""Kubernetes component: the control plane on the control nodes, the GPU servers as its nodes, the GPU layer.

KubePki generates the certificates, the kubelets' bootstrap token and the registry's credentials (a secret).
One HostProvision runs playbooks/kubernetes.yml over the `control_nodes` group with them as secret extra vars:
etcd, kube-apiserver, kube-controller-manager, kube-scheduler as systemd units, the TLS bootstrap Secret and
bindings, the cluster registry with the cluster's images. A second runs playbooks/k8s-nodes.yml over the GPU
servers: containerd, the kubelet (joined by TLS bootstrap), kube-proxy, the pod network and, in the lab, the
SIMULATED GPU device plugin; then k8s_gpu and the cluster DNS (k8s_dns: CoreDNS, Service kube-dns) applied with
kubectl through the first control node. It runs after every SU is provisioned.
The admin kubeconfig is a secret output (`clusterforge kubeconfig` prints it). Off the lab (`layer` given), a
KubeGpuLayer after it records what k8s_gpu applied, and `destroy` removes that from the API server through it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from clusterforge.pulumi.kube.kubeconfig import API_PORT, admin_kubeconfig
from clusterforge.pulumi.providers.host_provision import HostProvision, HostProvisionArgs
from clusterforge.pulumi.providers.kube_gpu_layer import KubeGpuLayer, KubeGpuLayerArgs
from clusterforge.pulumi.providers.kube_pki import KubePki, KubePkiArgs

__all__ = ["Kubernetes", "KubernetesArgs", "CONTROL_GROUP", "CONTROL_PLANE_UNITS", "KUEUE_UNITS", "NODE_UNITS",
           "NODES_GROUP", "NODES_PLAYBOOK", "REGISTRY_UNITS", "SIMULATED_GPU_UNITS"]

CONTROL_GROUP = "control_nodes"  # the inventory group (render.ansible_inventory.HOST_GROUPS)
NODES_GROUP = "servers"  # the GPU servers' group; the nodes' playbook runs k8s_node where the plan has a node
NODES_PLAYBOOK = "k8s-nodes.yml"
# the roles' units (roles/k8s_control_plane, k8s_registry, k8s_node); one not running is drift that `up` repairs
CONTROL_PLANE_UNITS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
REGISTRY_UNITS = ("docker-registry",)
KUEUE_UNITS = ("kueue",)  # roles/k8s_kueue, where the plan runs Kueue (cf_kubernetes.queueing.enabled)
NODE_UNITS = ("containerd", "cf-podnet", "kubelet", "kube-proxy")
SIMULATED_GPU_UNITS = ("cf-sim-gpu-plugin",)


@dataclass(frozen=True)
class KubernetesArgs:
    cluster: str
    node_ips: Sequence[str]  # the control nodes' management addresses
    service_ip: str  # the `kubernetes` Service's cluster IP (the API server's certificate names it)
    provision: HostProvisionArgs
    nodes: HostProvisionArgs | None = None  # the GPU servers joining as nodes (playbooks/k8s-nodes.yml)
    # what k8s_gpu applies (GpuLayer.to_dict()), for `destroy` to remove; None on the lab (it goes with the lab)
    layer: Mapping[str, Any] | None = None
    # the API's URL every kubeconfig names (plan/control_plane.py): the first control node's API server, or the
    # virtual address of three; "" (older callers): the first control node's
    api_server: str = ""
    api_vip: str | None = None  # the virtual address (the API server's certificate names it)


class Kubernetes(pulumi.ComponentResource):
    """clusterforge:kubernetes:Kubernetes — outputs `kubeconfig` (secret), `api_server`."""

    def __init__(self, name: str, args: KubernetesArgs, opts: pulumi.ResourceOptions | None = None,
                 ssh_config: pulumi.Input[str] | None = None, after: Sequence[pulumi.Resource] = ()) -> None:
        super().__init__("clusterforge:kubernetes:Kubernetes", name, None, opts)
        self.pki = KubePki(f"{name}-pki", KubePkiArgs(args.cluster, tuple(args.node_ips), args.service_ip,
                                                     args.api_vip),
                           pulumi.ResourceOptions(parent=self))
        provision = dataclasses.replace(
            args.provision, secret_vars=self.pki.bundle.apply(lambda bundle: {"cf_k8s_pki": bundle}))
        if ssh_config is not None:
            provision = dataclasses.replace(provision, ssh_config=ssh_config)
        self.provision = HostProvision(f"{name}-control-plane", provision,
                                       pulumi.ResourceOptions(parent=self, depends_on=[*after, self.pki]))
        nodes = args.nodes
        if nodes is not None and ssh_config is not None:
            nodes = dataclasses.replace(nodes, ssh_config=ssh_config)
        self.nodes = (HostProvision(f"{name}-nodes", dataclasses.replace(
            nodes, secret_vars=self.pki.bundle.apply(lambda bundle: {"cf_k8s_pki": bundle})),
            pulumi.ResourceOptions(parent=self, depends_on=[self.provision]))
            if nodes is not None else None)
        server = args.api_server or f"https://{args.node_ips[0]}:{API_PORT}"
        kubeconfig: pulumi.Output[str] = pulumi.Output.all(self.pki.bundle, self.provision.runs).apply(
            lambda values: admin_kubeconfig(args.cluster, server, values[0]))
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(kubeconfig)
        joined = [self.nodes] if self.nodes is not None else [self.provision]
        self.api_server = server
        self.layer = (KubeGpuLayer(f"{name}-gpu-layer", KubeGpuLayerArgs(args.cluster, self.api_server, args.layer),
                                   self.kubeconfig, pulumi.ResourceOptions(parent=self, depends_on=joined))
                      if args.layer is not None else None)
        self.register_outputs({"kubeconfig": self.kubeconfig, "api_server": self.api_server})
