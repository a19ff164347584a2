"""Declaration rules for Kubernetes networking; each problem names the field that causes it.

* ``kubernetes:`` settings without Kubernetes among the schedulers are never applied: refused;
* the pod and service ranges are disjoint from each other and from every plane's pool (cluster.py's
  pool check, which takes them in when Kubernetes is declared): a pod address equal to a switch's or a
  host's would be routed to the wrong place;
* the service range is /12 or longer (the API server refuses a larger IPv4 --service-cluster-ip-range);
* the pod range holds one ``node_pod_prefix`` block for every server the envelope allows
  (max_sus x max_nodes_per_su): a node's block is numbered from its SU and position, so adding an SU
  never renumbers one (plan/kubernetes.py).
* a team's borrowing and lending limits are Kueue's (plan/queueing.py): refused without Kubernetes, and a
  team lends at most its own GPUs (Kueue refuses a lendingLimit above the nominal quota).
* ``kueue: true`` queues the teams' GPUs: refused where no team is declared (there would be no queue).
* a DNS forwarder is outside the pod and service ranges (the cluster DNS would forward to itself) and declared once.
"""

from __future__ import annotations

from netaddr import IPNetwork

from clusterforge.model.cluster import ClusterSpec, Loc

__all__ = ["kubernetes_problems", "MAX_SERVICE_HOST_BITS"]

MAX_SERVICE_HOST_BITS = 20  # kube-apiserver: "for 32-bit addresses, the mask must be >= 12"


QUEUE_LIMITS = ("borrowing_limit_gpus", "lending_limit_gpus")


def _queue_limits(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    problems: list[tuple[Loc, str]] = []
    for index, team in enumerate(spec.teams):
        for field in QUEUE_LIMITS:
            if field in team.model_fields_set and "kubernetes" not in spec.schedulers:
                problems.append((("teams", index, field), f"{field} is a Kubernetes queue limit (Kueue) and is never"
                                 " applied without Kubernetes among the schedulers; drop it"))
        lend = team.lending_limit_gpus
        if lend is not None and lend > team.gpus:
            problems.append((("teams", index, "lending_limit_gpus"), f"{lend} GPUs to lend exceed the team's own"
                             f" {team.gpus}; a team lends at most its gpus"))
    return problems


def _forwarder_problems(forwarders: list[str], pods: IPNetwork, service: IPNetwork) -> list[tuple[Loc, str]]:
    problems: list[tuple[Loc, str]] = []
    for index, address in enumerate(forwarders):
        where: Loc = ("kubernetes", "dns_forwarders", index)
        inside = next((name for name, net in (("pod_cidr", pods), ("service_cidr", service)) if address in net), None)
        if inside:
            problems.append((where, f"{address} is inside {inside} {pods if inside == 'pod_cidr' else service}: the"
                             " cluster DNS would forward to the cluster; name the site's resolvers"))
        elif address in forwarders[:index]:
            problems.append((where, f"{address} is declared twice; name each resolver once"))
    return problems


def kubernetes_problems(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    k8s = spec.kubernetes
    problems: list[tuple[Loc, str]] = _queue_limits(spec)
    if "kubernetes" not in spec.schedulers:
        if "kubernetes" in spec.model_fields_set:
            problems.append((("kubernetes",), "kubernetes settings are never applied: add kubernetes to schedulers"
                             " or drop them"))
        return problems
    if k8s.kueue and not spec.teams:
        problems.append((("kubernetes", "kueue"), "Kueue queues the teams' GPU jobs and no team is declared; declare"
                         " teams or drop kueue"))
    service = IPNetwork(k8s.service_cidr)
    if 32 - service.prefixlen > MAX_SERVICE_HOST_BITS:
        problems.append((("kubernetes", "service_cidr"), f"/{service.prefixlen} is larger than the API server accepts"
                         f" for a service range; use /{32 - MAX_SERVICE_HOST_BITS} or longer"))
    pods = IPNetwork(k8s.pod_cidr)
    problems += _forwarder_problems(k8s.dns_forwarders, pods, service)
    if k8s.node_pod_prefix <= pods.prefixlen:
        problems.append((("kubernetes", "node_pod_prefix"), f"/{k8s.node_pod_prefix} blocks do not fit in pod_cidr"
                         f" {pods} more than once; use a longer prefix or a larger pod_cidr"))
        return problems
    blocks = 2 ** (k8s.node_pod_prefix - pods.prefixlen)
    needed = spec.envelope.max_sus * spec.envelope.max_nodes_per_su
    if blocks < needed:
        problems.append((("kubernetes", "pod_cidr"), f"{pods} holds {blocks} /{k8s.node_pod_prefix} node blocks; the"
                         f" envelope allows {needed} servers (max_sus {spec.envelope.max_sus} x max_nodes_per_su"
                         f" {spec.envelope.max_nodes_per_su}); use a larger pod_cidr or a longer node_pod_prefix"))
    return problems
