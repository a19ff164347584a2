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
* Control plane: its members and the one address every client names, a virtual one with three control nodes
  (plan/control_plane.py).
* Labels: the plan's topology labels (plan/topology.py), the GPU model and count; taints: GPU nodes take
  ``nvidia.com/gpu=present:NoSchedule`` (only pods that ask for GPUs, and tolerate it, land there).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from netaddr import IPAddress, IPNetwork

from clusterforge.model.cluster import ClusterSpec
from clusterforge.plan.control_plane import ControlPlanePlan, plan_control_plane
from clusterforge.plan.ipam import Pools
from clusterforge.plan.numbering import NODE_OFFSET
from clusterforge.plan.objects import Device
from clusterforge.plan.topology import SchedulerTopology
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["KubeNode", "KubernetesPlan", "plan_kubernetes", "GPU_TAINT", "VXLAN_ID", "VXLAN_PORT", "overlay_mac"]

GPU_TAINT = ("nvidia.com/gpu", "present", "NoSchedule")
VXLAN_ID = 1  # one overlay per cluster
VXLAN_PORT = 4789  # IANA's VXLAN port
VXLAN_OVERHEAD = 50  # outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8


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
class KubernetesPlan:
    pod_cidr: str
    service_cidr: str
    service_ip: str  # the `kubernetes` Service
    dns_ip: str
    overlay_mtu: int
    nodes: tuple[KubeNode, ...]
    control_plane: ControlPlanePlan | None = None  # None without control nodes

    def to_dict(self) -> dict[str, object]:
        return {"pod_cidr": self.pod_cidr, "service_cidr": self.service_cidr, "service_ip": self.service_ip,
                "dns_ip": self.dns_ip, "overlay": {"vxlan_id": VXLAN_ID, "port": VXLAN_PORT, "mtu": self.overlay_mtu},
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
    return KubernetesPlan(str(pods), str(services), str(IPAddress(services.first + 1)),
                          str(IPAddress(services.first + 10)), management_mtu - VXLAN_OVERHEAD, tuple(nodes),
                          plan_control_plane(pools.site_block(Plane.MANAGEMENT), devices))
