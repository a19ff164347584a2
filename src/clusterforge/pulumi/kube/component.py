"""Kubernetes component: the control plane on the control nodes and the GPU layer applied to it.

KubePki generates the certificates (a secret); one HostProvision runs playbooks/kubernetes.yml over the
`control_nodes` group with them as secret extra vars: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler as systemd units; in the lab kwok, the SIMULATED KUBELETS of the GPU servers, and the
nodes with their GPU capacity; then k8s_gpu applied with kubectl. It runs after every SU is provisioned.
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

__all__ = ["Kubernetes", "KubernetesArgs", "CONTROL_GROUP", "CONTROL_PLANE_UNITS", "SERVICE_CIDR", "SERVICE_IP"]

CONTROL_GROUP = "control_nodes"  # the inventory group (render.ansible_inventory.HOST_GROUPS)
SERVICE_CIDR = "10.96.0.0/12"  # the role's default service range; the `kubernetes` Service takes its first IP
SERVICE_IP = "10.96.0.1"
# the role's units (roles/k8s_control_plane/vars/main.yml); one not running is drift that `up` repairs
CONTROL_PLANE_UNITS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")


@dataclass(frozen=True)
class KubernetesArgs:
    cluster: str
    node_ips: Sequence[str]  # the control nodes' management addresses, first = the one kubeconfig names
    provision: HostProvisionArgs
    # what k8s_gpu applies (GpuLayer.to_dict()), for `destroy` to remove; None on the lab (it goes with the lab)
    layer: Mapping[str, Any] | None = None


class Kubernetes(pulumi.ComponentResource):
    """clusterforge:kubernetes:Kubernetes — outputs `kubeconfig` (secret), `api_server`."""

    def __init__(self, name: str, args: KubernetesArgs, opts: pulumi.ResourceOptions | None = None,
                 ssh_config: pulumi.Input[str] | None = None, after: Sequence[pulumi.Resource] = ()) -> None:
        super().__init__("clusterforge:kubernetes:Kubernetes", name, None, opts)
        self.pki = KubePki(f"{name}-pki", KubePkiArgs(args.cluster, tuple(args.node_ips), SERVICE_IP),
                           pulumi.ResourceOptions(parent=self))
        provision = dataclasses.replace(
            args.provision, secret_vars=self.pki.bundle.apply(lambda bundle: {"cf_k8s_pki": bundle}),
            **({"ssh_config": ssh_config} if ssh_config is not None else {}))
        self.provision = HostProvision(f"{name}-control-plane", provision,
                                       pulumi.ResourceOptions(parent=self, depends_on=[*after, self.pki]))
        first = args.node_ips[0]
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.pki.bundle, self.provision.runs).apply(
                lambda values: admin_kubeconfig(args.cluster, first, values[0])))
        self.api_server = f"https://{first}:{API_PORT}"
        self.layer = (KubeGpuLayer(f"{name}-gpu-layer", KubeGpuLayerArgs(args.cluster, self.api_server, args.layer),
                                   self.kubeconfig, pulumi.ResourceOptions(parent=self, depends_on=[self.provision]))
                      if args.layer is not None else None)
        self.register_outputs({"kubeconfig": self.kubeconfig, "api_server": self.api_server})
