"""The lab BMCs' TLS: one CA per lab home (``.lab/pki/bmc-ca.pem``), one server certificate per BMC address.

The CA's key never leaves ``.lab/pki`` (mode 0600); a declaration that manages lab servers names the CA file
(``ca: .lab/pki/bmc-ca.pem``) and the Redfish client verifies every BMC against it.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from clusterforge.paths import lab_home

from .util import write_atomic

__all__ = ["ca_paths", "ensure_ca", "issue_server_cert"]

VALID_DAYS = 825


def ca_paths() -> tuple[Path, Path]:
    pki = lab_home() / "pki"
    return pki / "bmc-ca.pem", pki / "bmc-ca.key"


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def ensure_ca() -> Path:
    """The lab BMC CA certificate (created once)."""
    cert_path, key_path = ca_paths()
    if cert_path.exists() and key_path.exists():
        return cert_path
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "clusterforge lab BMC CA")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    write_atomic(key_path, _key_pem(key), mode=0o600)
    write_atomic(cert_path, cert.public_bytes(serialization.Encoding.PEM))
    return cert_path


def issue_server_cert(address: str, out_dir: Path) -> tuple[Path, Path]:
    """(certificate, key) for a BMC at ``address`` (an IP SAN), signed by the lab CA, written under out_dir."""
    ca_cert_path, ca_key_path = ca_paths()
    ensure_ca()
    ca_cert = x509.load_pem_x509_certificate(ca_cert_path.read_bytes())
    ca_key = serialization.load_pem_private_key(ca_key_path.read_bytes(), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, address)]))
            .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=VALID_DAYS))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(address))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))  # type: ignore[arg-type]
    cert_path, key_path = out_dir / "bmc-cert.pem", out_dir / "bmc-key.pem"
    write_atomic(key_path, _key_pem(key), mode=0o600)
    write_atomic(cert_path, cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path
