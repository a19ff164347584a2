"""Kubernetes networking of the cluster: the pod and service address ranges.

Every GPU server runs a kubelet; each gets one block of ``pod_cidr`` (``node_pod_prefix`` long) for its
pods, and the Services take their cluster IPs from ``service_cidr`` (the API server's
--service-cluster-ip-range; its first address is the ``kubernetes`` Service). The defaults are the
ranges kubeadm and most CNI plugins use; a lab or a site that must stay inside its own blocks declares
its own (the lab: RFC 2544's 198.18.0.0/15, like every other lab address).

``kueue: true`` runs Kueue (roles/k8s_kueue) on the first control node with the plan's queues
(plan/queueing.py): the teams' GPU jobs wait in their team's queue instead of being refused, and each team's
ResourceQuota becomes its ceiling (nominal GPUs plus borrowing limit). Off by default.
"""

from pydantic import Field

from clusterforge.model.base import Declared
from clusterforge.model.numbers import Integer
from clusterforge.model.pools import Ipv4Pool

__all__ = ["Kubernetes", "DEFAULT_POD_CIDR", "DEFAULT_SERVICE_CIDR"]

DEFAULT_POD_CIDR = "10.244.0.0/16"
DEFAULT_SERVICE_CIDR = "10.96.0.0/12"


class Kubernetes(Declared):
    pod_cidr: Ipv4Pool = DEFAULT_POD_CIDR
    service_cidr: Ipv4Pool = DEFAULT_SERVICE_CIDR
    # /24 per node: 254 pod addresses, above the kubelet's default of 110 pods
    node_pod_prefix: Integer = Field(default=24, ge=16, le=28)
    # Kueue admits the teams' GPU jobs by the plan's queues (docs/queueing.md); needs teams
    kueue: bool = False
