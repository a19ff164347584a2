"""Kubernetes networking of the cluster: the pod and service address ranges.

Every GPU server runs a kubelet; each gets one block of ``pod_cidr`` (``node_pod_prefix`` long) for its
pods, and the Services take their cluster IPs from ``service_cidr`` (the API server's
--service-cluster-ip-range; its first address is the ``kubernetes`` Service). The defaults are the
ranges kubeadm and most CNI plugins use; a lab or a site that must stay inside its own blocks declares
its own (the lab: RFC 2544's 198.18.0.0/15, like every other lab address).

``kueue: true`` runs Kueue (roles/k8s_kueue) on the first control node with the plan's queues
(plan/queueing.py): the teams' GPU jobs wait in their team's queue instead of being refused, and each team's
ResourceQuota becomes its ceiling (nominal GPUs plus borrowing limit). Off by default.

``dns_forwarders``: the site's resolvers the cluster DNS (CoreDNS, roles/k8s_dns) forwards names outside the
cluster domain to, IPv4 unicast host addresses. None declared: a real site's CoreDNS forwards to its nodes'
/etc/resolv.conf; the lab's forwards nowhere (no packet of the twin leaves 198.18.0.0/15).
"""

from typing import Annotated

from netaddr import AddrFormatError, IPAddress
from pydantic import AfterValidator, Field

from clusterforge.model.base import Declared
from clusterforge.model.numbers import Integer
from clusterforge.model.pools import Ipv4Pool

__all__ = ["Kubernetes", "DEFAULT_POD_CIDR", "DEFAULT_SERVICE_CIDR", "MAX_DNS_FORWARDERS", "DnsForwarder"]

DEFAULT_POD_CIDR = "10.244.0.0/16"
DEFAULT_SERVICE_CIDR = "10.96.0.0/12"
MAX_DNS_FORWARDERS = 3  # resolv.conf's own limit of nameservers


def _forwarder(value: str) -> str:
    """An IPv4 unicast host address in dotted form (it reaches CoreDNS's Corefile)."""
    try:
        ip = IPAddress(value, version=4, flags=1)  # INET_PTON: four parts, no leading zeros
    except (AddrFormatError, ValueError, TypeError):
        raise ValueError("not an IPv4 address; a DNS forwarder is an IPv4 host address (e.g. 198.18.8.1)") from None
    if str(ip) != value or ip.is_loopback() or ip.is_multicast() or ip.is_reserved() or value.startswith("0.") \
            or int(ip) == 2**32 - 1:
        raise ValueError(f"{value} is not a unicast host address; a DNS forwarder is one (e.g. 198.18.8.1)")
    return value


DnsForwarder = Annotated[str, AfterValidator(_forwarder)]


class Kubernetes(Declared):
    pod_cidr: Ipv4Pool = DEFAULT_POD_CIDR
    service_cidr: Ipv4Pool = DEFAULT_SERVICE_CIDR
    # /24 per node: 254 pod addresses, above the kubelet's default of 110 pods
    node_pod_prefix: Integer = Field(default=24, ge=16, le=28)
    # Kueue admits the teams' GPU jobs by the plan's queues (docs/queueing.md); needs teams
    kueue: bool = False
    # the site's resolvers for names outside the cluster domain (roles/k8s_dns); none: see above
    dns_forwarders: list[DnsForwarder] = Field(default=[], max_length=MAX_DNS_FORWARDERS)
