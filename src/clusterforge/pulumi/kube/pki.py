"""The control plane's certificates and service-account key, generated here (Python `cryptography`).

One CA signs every certificate: the API server's serving certificate (SANs: each control node's
address, the API's virtual address with three control nodes, loopback, the `kubernetes` Service's names
and cluster IP), etcd's serving and peer certificate, the API server's etcd client, and the client
certificates the components and the admin authenticate with (Kubernetes maps CN to the user and O to groups:
system:kube-controller-manager, system:kube-scheduler, system:masters for the admin). ECDSA P-256 keys: quick
to generate, accepted by every component (and ES256 for service-account tokens). The bundle is a Pulumi
secret (KubePki).

Beside the certificates: the bootstrap token the kubelets join with (TLS bootstrap: `<id>.<secret>`, 6 and 16
characters of [a-z0-9], the form the API server's bootstrap authenticator accepts), the cluster registry's
serving certificate (the first control node's address) and its push/pull password with the bcrypt htpasswd
line the registry checks it against.
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
import string
from collections.abc import Sequence
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["CLIENTS", "make_bundle", "SERVICE_DNS", "REGISTRY_USER", "bootstrap_token"]

CA_DAYS = 3650
LEAF_DAYS = 365
SERVICE_DNS = ("kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
# bundle key -> (CN, O): the identities the components log in with (RBAC's built-in bindings name them)
CLIENTS = {
    "admin": ("clusterforge-admin", "system:masters"),
    "controller-manager": ("system:kube-controller-manager", None),
    "scheduler": ("system:kube-scheduler", None),
    # kwok, the lab's simulated kubelets, writes node and pod status for every GPU node
    "kwok": ("clusterforge-kwok", "system:masters"),
    "apiserver-etcd-client": ("kube-apiserver-etcd-client", None),
    # the API server to the kubelets (logs, exec, port-forward): the kubelets authorize it by its group
    "apiserver-kubelet-client": ("kube-apiserver-kubelet-client", "system:masters"),
    # kube-proxy on every node (RBAC's built-in system:node-proxier binding names this user)
    "kube-proxy": ("system:kube-proxy", None),
}
REGISTRY_USER = "clusterforge"
_TOKEN_CHARS = string.ascii_lowercase + string.digits


def bootstrap_token() -> str:
    """A bootstrap token, `<6>.<16>` of [a-z0-9] (k8s.io/cluster-bootstrap's token format)."""
    def part(n: int) -> str:
        return "".join(secrets.choice(_TOKEN_CHARS) for _ in range(n))

    return f"{part(6)}.{part(16)}"


def _htpasswd(user: str, password: str) -> str:
    import bcrypt  # paramiko's dependency; the registry's htpasswd auth accepts bcrypt only

    return f"{user}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=10)).decode()}\n"


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _pem_cert(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _name(cn: str, org: str | None = None) -> x509.Name:
    parts = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        parts.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(parts)


def _sign(subject: x509.Name, key: ec.EllipticCurvePrivateKey, ca_name: x509.Name, ca_key: ec.EllipticCurvePrivateKey,
          days: int, now: datetime.datetime, *, ca: bool = False, server: bool = False, client: bool = False,
          dns: Sequence[str] = (), ips: Sequence[str] = ()) -> x509.Certificate:
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=days))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False),
                                        critical=True)
    else:
        builder = builder.add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False),
                                        critical=True)
        usages = [ExtendedKeyUsageOID.SERVER_AUTH] * server + [ExtendedKeyUsageOID.CLIENT_AUTH] * client
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    if dns or ips:
        names = [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(ca_key, hashes.SHA256())


def make_bundle(cluster: str, node_ips: Sequence[str], service_ip: str, api_vip: str | None = None) -> dict[str, str]:
    """PEM text by file name: ca.crt/ca.key, apiserver, etcd-server, one pair per CLIENTS key, sa.key/sa.pub.
    `api_vip`: the API's virtual address of a highly available control plane, named by the API server's
    certificate too (clients reach every API server through it)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = _key()
    ca_name = _name(f"clusterforge-{cluster}-ca")
    ca = _sign(ca_name, ca_key, ca_name, ca_key, CA_DAYS, now, ca=True)
    out = {"ca.crt": _pem_cert(ca), "ca.key": _pem_key(ca_key)}
    ips = ["127.0.0.1", *node_ips]
    serving: dict[str, tuple[x509.Name, dict[str, Any]]] = {
        "apiserver": (_name("kube-apiserver"), dict(dns=(*SERVICE_DNS, "localhost"),
                                                    ips=(*ips, service_ip, *([api_vip] if api_vip else [])))),
        "etcd-server": (_name("etcd"), dict(dns=("localhost",), ips=ips)),
    }
    for file, (subject, sans) in serving.items():
        key = _key()
        cert = _sign(subject, key, ca_name, ca_key, LEAF_DAYS, now, server=True, client=True, **sans)
        out[f"{file}.crt"], out[f"{file}.key"] = _pem_cert(cert), _pem_key(key)
    for file, (cn, org) in CLIENTS.items():
        key = _key()
        cert = _sign(_name(cn, org), key, ca_name, ca_key, LEAF_DAYS, now, client=True)
        out[f"{file}.crt"], out[f"{file}.key"] = _pem_cert(cert), _pem_key(key)
    key = _key()
    cert = _sign(_name("clusterforge-registry"), key, ca_name, ca_key, LEAF_DAYS, now, server=True,
                 ips=node_ips[:1])
    out["registry.crt"], out["registry.key"] = _pem_cert(cert), _pem_key(key)
    out["registry-password"] = secrets.token_urlsafe(24)
    out["registry-htpasswd"] = _htpasswd(REGISTRY_USER, out["registry-password"])
    out["bootstrap-token"] = bootstrap_token()
    sa = _key()
    out["sa.key"] = _pem_key(sa)
    out["sa.pub"] = sa.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return out
