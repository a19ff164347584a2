"""The grammars every value passes before it reaches a preseed, a dnsmasq line, a GRUB entry or a boot URL.

Each constructor returns the value in one canonical spelling or raises ``NetbootValueError`` naming the
field and the allowed form. None of the results can carry a quote, a space, a newline, a ``$``, a
backquote, a ``;`` or a ``#``: a preseed's late_command is run by a shell, a dnsmasq or GRUB line splits
on spaces and commas, so a declared or read-back value (a hostname, a MAC a BMC reported, an address)
can neither add a command nor a line.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import netaddr

from clusterforge.model.timeservers import ALLOWED as TIME_SERVER_FORM
from clusterforge.model.timeservers import check_time_server

__all__ = [
    "NetbootValueError", "hostname", "dns_name", "mac", "ipv4", "ipv4_cidr", "port", "disk_device", "ssh_public_key",
    "url_path", "HttpEndpoint", "time_server",
]

_HOSTNAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_DISK = re.compile(r"/dev/(?:[sv]d[a-z]{1,2}|nvme[0-9]{1,2}n[0-9]{1,2}|disk/by-id/[A-Za-z0-9_.:-]{1,120})")
_SSH_KEY = re.compile(r"(ssh-ed25519|ecdsa-sha2-nistp256|ssh-rsa) ([A-Za-z0-9+/]{40,1400}={0,2})"
                      r"(?: ([A-Za-z0-9@._-]{1,64}))?")
_PATH_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class NetbootValueError(ValueError):
    """A value outside its grammar: ``field`` and what is allowed."""

    def __init__(self, field: str, value: object, allowed: str) -> None:
        super().__init__(f"{field}: {value!r} is not allowed; {allowed}")
        self.field = field


def hostname(field: str, value: str) -> str:
    if not isinstance(value, str) or not _HOSTNAME.fullmatch(value):
        raise NetbootValueError(field, value, "a host name of 1-63 characters of a-z, 0-9 and '-'"
                                              " starting and ending with a letter or digit")
    return value


def dns_name(field: str, value: str) -> str:
    """A DNS name of labels (a mirror's host name), lower case."""
    labels = value.split(".") if isinstance(value, str) and len(value) <= 253 else [""]
    if not all(_HOSTNAME.fullmatch(label) for label in labels):
        raise NetbootValueError(field, value, "a DNS name of dot-separated labels of a-z, 0-9 and '-'")
    return value


def time_server(field: str, value: str) -> str:
    """An NTP server as site.time_servers takes it (model.timeservers' grammar): an IPv4 host address or a
    DNS name."""
    try:
        return check_time_server(value) if isinstance(value, str) else check_time_server("")
    except ValueError:
        raise NetbootValueError(field, value, TIME_SERVER_FORM) from None


def mac(field: str, value: str) -> str:
    """A unicast MAC in lower-case colon form (netaddr parses every usual spelling)."""
    try:
        eui = netaddr.EUI(value, version=48)
    except (netaddr.AddrFormatError, TypeError, ValueError):
        raise NetbootValueError(field, value, "a 48-bit MAC address such as 52:54:00:12:34:56") from None
    if eui.words[0] & 1:
        raise NetbootValueError(field, value, "a unicast MAC (the first octet's low bit clear)")
    return str(eui).replace("-", ":").lower()


def ipv4(field: str, value: str) -> str:
    """A host address (no prefix): not loopback, multicast, reserved, unspecified or broadcast."""
    try:
        ip = netaddr.IPAddress(value, version=4, flags=netaddr.INET_PTON)
    except (netaddr.AddrFormatError, TypeError, ValueError):
        raise NetbootValueError(field, value, "an IPv4 address such as 198.18.8.11") from None
    if ip.is_loopback() or ip.is_multicast() or ip.is_reserved() or int(ip) in (0, 2**32 - 1):
        raise NetbootValueError(field, value, "a unicast host address (not loopback, multicast or reserved)")
    return str(ip)


def ipv4_cidr(field: str, value: str) -> tuple[str, int]:
    """``ADDRESS/PREFIX`` as (address, prefix length); the address is a host of that subnet."""
    if not isinstance(value, str) or "/" not in value:
        raise NetbootValueError(field, value, "ADDRESS/PREFIX such as 198.18.8.11/24")
    address, _, prefix = value.partition("/")
    ip = ipv4(field, address)
    if not prefix.isdigit() or not 8 <= int(prefix) <= 32:
        raise NetbootValueError(field, value, "a prefix length of 8-32")
    net = netaddr.IPNetwork(f"{ip}/{prefix}")
    if net.prefixlen <= 30 and net.ip in (net.network, net.broadcast):  # a /31 link uses both (RFC 3021)
        raise NetbootValueError(field, value, "a host address of the subnet (not its network or broadcast address)")
    return ip, int(prefix)


def port(field: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 65535:
        raise NetbootValueError(field, value, "a TCP/UDP port 1-65535")
    return value


def disk_device(field: str, value: str) -> str:
    if not isinstance(value, str) or not _DISK.fullmatch(value) or ".." in value:
        raise NetbootValueError(field, value, "a whole-disk device: /dev/vda, /dev/sda, /dev/nvme0n1"
                                              " or /dev/disk/by-id/NAME")
    return value


def ssh_public_key(field: str, value: str) -> str:
    """One OpenSSH public key line (type, base64 blob, optional plain comment), never a private key."""
    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not _SSH_KEY.fullmatch(text):
        raise NetbootValueError(field, "<key>" if isinstance(value, str) and "PRIVATE" in value else value,
                                "one OpenSSH public key: 'ssh-ed25519 BASE64 [comment]' (comment of letters,"
                                " digits, '@', '.', '_' and '-')")
    return text


def url_path(field: str, *parts: str) -> str:
    """``/a/b/c`` from parts that are each one plain path component (no '..', no '/', no query)."""
    for part in parts:
        if not isinstance(part, str) or not _PATH_PART.fullmatch(part) or ".." in part:
            raise NetbootValueError(field, part, "path components of letters, digits, '.', '_' and '-'")
    return "/" + "/".join(parts)


class HttpEndpoint(NamedTuple):
    """An HTTP server on the provisioning network: every URL is built from these checked parts."""

    host: str
    port: int

    @classmethod
    def of(cls, field: str, host: str, port_number: int) -> HttpEndpoint:
        return cls(ipv4(f"{field}.host", host), port(f"{field}.port", port_number))

    def url(self, *parts: str) -> str:
        return f"http://{self.host}:{self.port}{url_path('url', *parts) if parts else '/'}"
