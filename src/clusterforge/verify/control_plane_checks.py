"""The control plane's own checks: every member's API server and etcd, and the API through the address clients use.

Per control node of the plan (``expected["control_plane"]["members"]``, plan/control_plane.py): ``apiserver
NAME`` asks that node's API server for /readyz on its own address and port, ``etcd NAME`` asks that node's etcd
member for /health on its client URL; both with the client certificate of the kubeconfig verify runs with (the
cluster CA signs it and etcd trusts that CA). ``api ADDRESS:PORT`` asks /readyz through the address every
kubeconfig names: the virtual address of a highly available control plane, which keeps answering with one member
stopped while that member's two checks fail, naming it.
"""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Mapping
from typing import Any

from clusterforge.verify.layer_check import LayerCheck

__all__ = ["control_plane_checks", "ETCD_CLIENT_PORT"]

ETCD_CLIENT_PORT = 2379
TIMEOUT_S = 5.0


def _tls(configuration: Any) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
    context.load_cert_chain(configuration.cert_file, configuration.key_file)
    return context


def _get(context: ssl.SSLContext, host: str, port: int, path: str) -> tuple[int, str]:
    """(status, body) of GET path, or raises OSError (refused, unreachable, timed out, TLS)."""
    conn = http.client.HTTPSConnection(host, port, context=context, timeout=TIMEOUT_S)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read(4096).decode(errors="replace").strip()
    finally:
        conn.close()


def _readyz(context: ssl.SSLContext, name: str, host: str, port: int) -> LayerCheck:
    try:
        status, body = _get(context, host, port, "/readyz")
    except OSError as exc:
        return LayerCheck(name, False, f"{host}:{port}: no answer ({exc.__class__.__name__}: {exc})")
    ok = status == 200 and body == "ok"
    return LayerCheck(name, ok, f"{host}:{port} /readyz: {status} {body[-200:]}")


def _etcd(context: ssl.SSLContext, member: str, host: str) -> LayerCheck:
    name = f"etcd {member}"
    try:
        status, body = _get(context, host, ETCD_CLIENT_PORT, "/health")
    except OSError as exc:
        return LayerCheck(name, False, f"member {member} at {host}:{ETCD_CLIENT_PORT} down:"
                                       f" {exc.__class__.__name__}: {exc}")
    try:
        healthy = json.loads(body).get("health") == "true"
    except ValueError:
        healthy = False
    return LayerCheck(name, status == 200 and healthy, f"member {member} at {host}:{ETCD_CLIENT_PORT} /health:"
                                                       f" {status} {body[-200:]}")


def control_plane_checks(configuration: Any, expected: Mapping[str, Any]) -> list[LayerCheck]:
    """`configuration`: the kubernetes client's (its CA and client certificate files); `expected`: cf_kubernetes
    (clusterforge.render.ansible_inventory.kubernetes_vars). No checks without a planned control plane."""
    plan = expected.get("control_plane")
    if not plan:
        return []
    context = _tls(configuration)
    out = []
    for member in plan["members"]:
        out.append(_readyz(context, f"apiserver {member['name']}", member["ip"], int(plan["api_port"])))
        out.append(_etcd(context, member["name"], member["ip"]))
    what = "virtual address" if plan["ha"] else "the only control node"
    check = _readyz(context, f"api {plan['address']}:{plan['port']}", plan["address"], int(plan["port"]))
    out.append(LayerCheck(check.name, check.ok, f"{what}: {check.detail}"))
    return out
