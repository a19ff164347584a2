"""Kubernetes networking and node identity from the plan: pod blocks, the overlay, labels and taints.

* Pod blocks: GPU server ``n`` (its stable id inside its SU, the one its management address is numbered
  from) of SU ``s`` takes block ``(s - 1) * max_nodes_per_su + n - 1`` of ``kubernetes.pod_cidr``: adding
  an SU or a server never renumbers a node's pods (the declaration check sizes pod_cidr for the envelope).
* Pod network: a bridge per node (the bridge and host-local CNI plugins) and, between nodes, a VXLAN
  overlay on the management plane (the Linux kernel's own VXLAN device, static forwarding entries: no
  multicast, no learning). Every node's VXLAN endpoint address is its management address; its overlay
  MAC is 02:cf followed by the four bytes of its pod block's base, so every node derives every peer's
  entry from the plan alone. The overlay runs over any routed management network (one L2 segment or
  many), which host routes to the peers' management addresses would not.
* Service addresses: the ``kubernetes`` Service takes the first address of ``kubernetes.service_cidr``
  (the API server's certificate names it), the cluster DNS the tenth (kubeadm's convention).
* Cluster DNS (CoreDNS, roles/k8s_dns): the Service ``kube-dns`` at that tenth address, the domain
  ``cluster.local`` (every kubelet's clusterDomain), two replicas where two nodes can hold them, forwarding
  names outside the domain to the declaration's ``dns_forwarders`` only.
* Control plane: its members and the one address every client names, a virtual one with three control nodes
  (plan/control_plane.py).
* Labels: the plan's topology labels (plan/topology.py), the GPU model and count; taints: GPU nodes take
  ``nvidia.com/gpu=present:NoSchedule`` (only pods that ask for GPUs, and tolerate it, land there).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from netaddr import IPAddress, IPNetwork

from clusterforge.model.cluster import ClusterSpec
from clusterforge.plan.control_plane import ControlPlanePlan, plan_control_plane
from clusterforge.plan.ipam import Pools
from clusterforge.plan.numbering import NODE_OFFSET
from clusterforge.plan.objects import Device
from clusterforge.plan.topology import SchedulerTopology
from clusterforge.vocab import DeviceKind, Plane

if TYPE_CHECKING:
    from clusterforge.plan.dra import DeviceClassPlan

__all__ = ["KubeNode", "KubernetesPlan", "ClusterDns", "plan_kubernetes", "plan_cluster_dns", "cluster_dns_ip",
           "GPU_TAINT", "VXLAN_ID", "VXLAN_PORT", "CLUSTER_DOMAIN", "DNS_SERVICE_OFFSET", "overlay_mac"]

GPU_TAINT = ("nvidia.com/gpu", "present", "NoSchedule")
VXLAN_ID = 1  # one overlay per cluster
VXLAN_PORT = 4789  # IANA's VXLAN port
VXLAN_OVERHEAD = 50  # outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8
CLUSTER_DOMAIN = "cluster.local"
DNS_SERVICE_OFFSET = 10  # the service range's tenth address (kubeadm's convention)
MAX_DNS_REPLICAS = 2


@dataclass(frozen=True)
class KubeNode:
    name: str
    address: str  # management address: the kubelet's node IP and the overlay endpoint
    pod_cidr: str
    overlay_mac: str
    gpus: int
    gpu_model: str
    labels: tuple[tuple[str, str], ...]

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "ip": self.address, "pod_cidr": self.pod_cidr, "overlay_mac": self.overlay_mac,
                "gpu_count": self.gpus, "gpu_model": self.gpu_model, "labels": dict(self.labels)}


@dataclass(frozen=True)
class ClusterDns:
    ip: str  # the kube-dns Service's cluster IP: every kubelet's clusterDNS
    domain: str  # every kubelet's clusterDomain
    forwarders: tuple[str, ...]  # the declaration's; none: the node's resolv.conf, or nowhere in the lab
    replicas: int

    def to_dict(self) -> dict[str, object]:
        return {"ip": self.ip, "domain": self.domain, "forwarders": list(self.forwarders), "replicas": self.replicas}


def cluster_dns_ip(service_cidr: str) -> str:
    """The cluster DNS Service's address: the tenth of the service range."""
    return str(IPAddress(IPNetwork(service_cidr).first + DNS_SERVICE_OFFSET))


def plan_cluster_dns(service_cidr: str, forwarders: Iterable[str], nodes: int) -> ClusterDns:
    """Two replicas (each on another node, roles/k8s_dns) where the cluster has two nodes, else one."""
    return ClusterDns(cluster_dns_ip(service_cidr), CLUSTER_DOMAIN, tuple(forwarders),
                      max(1, min(MAX_DNS_REPLICAS, nodes)))


@dataclass(frozen=True)
class KubernetesPlan:
    pod_cidr: str
    service_cidr: str
    service_ip: str  # the `kubernetes` Service
    dns_ip: str
    overlay_mtu: int
    nodes: tuple[KubeNode, ...]
    control_plane: ControlPlanePlan | None = None  # None without control nodes
    dns: ClusterDns | None = None  # plan_kubernetes always sets it

    @cached_property
    def device_classes(self) -> tuple[DeviceClassPlan, ...]:
        """The DRA DeviceClasses of the nodes' GPU models (plan/dra.py), computed once per plan: the Kueue check,
        the DRA objects and the team quotas all read these."""
        from clusterforge.plan.dra import plan_device_classes

        return plan_device_classes(self.nodes)

    def to_dict(self) -> dict[str, object]:
        return {"pod_cidr": self.pod_cidr, "service_cidr": self.service_cidr, "service_ip": self.service_ip,
                "dns_ip": self.dns_ip, "dns": self.dns.to_dict() if self.dns is not None else None,
                "overlay": {"vxlan_id": VXLAN_ID, "port": VXLAN_PORT, "mtu": self.overlay_mtu},
                "nodes": [n.to_dict() for n in self.nodes],
                "control_plane": self.control_plane.to_dict() if self.control_plane is not None else None}


def overlay_mac(pod_block: IPNetwork) -> str:
    return "02:cf:" + ":".join(f"{int(o):02x}" for o in str(pod_block.network).split("."))


def _node_id(pools: Pools, device: Device) -> int:
    """The server's stable id inside its SU: what its management address is numbered from (ipam.Pools.node)."""
    assert device.su is not None and device.management_ip is not None
    block = pools.su_block(Plane.MANAGEMENT, device.su)
    return int(IPAddress(device.management_ip)) - block.base - NODE_OFFSET + 1


def plan_kubernetes(spec: ClusterSpec, pools: Pools, devices: Iterable[Device], gpu_models: dict[str, str],
                    topology: SchedulerTopology | None, management_mtu: int) -> KubernetesPlan:
    k8s = spec.kubernetes
    pods = IPNetwork(k8s.pod_cidr)
    services = IPNetwork(k8s.service_cidr)
    block_size = 2 ** (32 - k8s.node_pod_prefix)
    devices = list(devices)
    nodes = []
    for device in devices:
        if device.kind != DeviceKind.SERVER or not device.gpus or device.su is None or not device.management_ip:
            continue
        index = (device.su - 1) * spec.envelope.max_nodes_per_su + _node_id(pools, device) - 1
        block = IPNetwork(f"{IPAddress(pods.first + index * block_size)}/{k8s.node_pod_prefix}")
        labels = dict(topology.labels(device.name)) if topology else {}
        nodes.append(KubeNode(device.name, device.management_ip, str(block), overlay_mac(block), device.gpus,
                              gpu_models[device.name], tuple(sorted(labels.items()))))
    dns = plan_cluster_dns(str(services), k8s.dns_forwarders, len(nodes))
    return KubernetesPlan(str(pods), str(services), str(IPAddress(services.first + 1)), dns.ip,
                          management_mtu - VXLAN_OVERHEAD, tuple(nodes),
                          plan_control_plane(pools.site_block(Plane.MANAGEMENT), devices), dns)
