"""The admin kubeconfig `clusterforge kubeconfig` prints: the plan's API address (the only control node's API
server, or the virtual address of three: plan/control_plane.py), the cluster CA and the admin client certificate
from the KubePki bundle (a Pulumi secret)."""

from __future__ import annotations

import base64
from collections.abc import Mapping

import yaml

__all__ = ["admin_kubeconfig", "API_PORT"]

API_PORT = 6443


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def admin_kubeconfig(cluster: str, server: str, bundle: Mapping[str, str]) -> str:
    """`server`: the API's URL (https://ADDRESS:PORT)."""
    user = f"{cluster}-admin"
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": cluster, "cluster": {"server": server,
                                                   "certificate-authority-data": _b64(bundle["ca.crt"])}}],
        "users": [{"name": user, "user": {"client-certificate-data": _b64(bundle["admin.crt"]),
                                          "client-key-data": _b64(bundle["admin.key"])}}],
        "contexts": [{"name": f"{user}@{cluster}", "context": {"cluster": cluster, "user": user}}],
        "current-context": f"{user}@{cluster}",
    }
    return yaml.safe_dump(config, sort_keys=False)
