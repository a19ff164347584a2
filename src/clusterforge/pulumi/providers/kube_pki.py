"""KubePki: the control plane's CA, certificates and service-account key, as a Pulumi secret.

Create generates them (clusterforge.pulumi.kube.pki); they live only in the stack's state, encrypted
as a secret output (`bundle`), and reach the control nodes through HostProvision's secret extra vars.
A change of the control nodes' addresses, the API's virtual address or the service range replaces them
(new SANs); anything else keeps them, so a second `up` changes nothing. Delete forgets them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider

__all__ = ["KubePki", "KubePkiArgs"]

REPLACE_KEYS = ("cluster", "node_ips", "service_ip", "api_vip")


@dataclass(frozen=True)
class KubePkiArgs:
    cluster: str
    node_ips: Sequence[str]
    service_ip: str
    api_vip: str | None = None  # a highly available control plane's virtual API address (the API certificate's SAN)


class KubePkiProvider(ResourceProvider):
    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in REPLACE_KEYS if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=changed, delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        from clusterforge.pulumi.kube.pki import make_bundle

        bundle = make_bundle(props["cluster"], list(props["node_ips"]), props["service_ip"], props.get("api_vip"))
        return CreateResult(f"pki-{props['cluster']}", {**props, "bundle": bundle})

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None


class KubePki(Resource, module="clusterforge", name="KubePki"):
    """pulumi-python:dynamic/clusterforge:KubePki — output `bundle` (secret): PEM text by file name."""

    bundle: pulumi.Output[dict[str, str]]

    def __init__(self, name: str, args: KubePkiArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        props = {"cluster": args.cluster, "node_ips": list(args.node_ips), "service_ip": args.service_ip,
                 "bundle": None}
        if args.api_vip:  # only then: a stack of one control node keeps its props, and so its certificates
            props["api_vip"] = args.api_vip
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=["bundle"]))
        super().__init__(KubePkiProvider(), name, props, opts)
