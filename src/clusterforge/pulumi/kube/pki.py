"""The control plane's certificates and service-account key, generated here (Python `cryptography`).

One CA signs every certificate: the API server's serving certificate (SANs: each control node's
address, loopback, the `kubernetes` Service's names and cluster IP), etcd's serving and peer
certificate, the API server's etcd client, and the client certificates the components and the admin
authenticate with (Kubernetes maps CN to the user and O to groups: system:kube-controller-manager,
system:kube-scheduler, system:masters for the admin). ECDSA P-256 keys: quick to generate, accepted by
every component (and ES256 for service-account tokens). The bundle is a Pulumi secret (KubePki).
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["CLIENTS", "make_bundle", "SERVICE_DNS"]

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
}


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


def make_bundle(cluster: str, node_ips: Sequence[str], service_ip: str) -> dict[str, str]:
    """PEM text by file name: ca.crt/ca.key, apiserver, etcd-server, one pair per CLIENTS key, sa.key/sa.pub."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = _key()
    ca_name = _name(f"clusterforge-{cluster}-ca")
    ca = _sign(ca_name, ca_key, ca_name, ca_key, CA_DAYS, now, ca=True)
    out = {"ca.crt": _pem_cert(ca), "ca.key": _pem_key(ca_key)}
    ips = ["127.0.0.1", *node_ips]
    serving = {
        "apiserver": (_name("kube-apiserver"), dict(dns=(*SERVICE_DNS, "localhost"), ips=(*ips, service_ip))),
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
    sa = _key()
    out["sa.key"] = _pem_key(sa)
    out["sa.pub"] = sa.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return out
