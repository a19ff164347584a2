"""Address pools: an IPv4 prefix without host bits, in unicast space a cluster can use."""

from __future__ import annotations

import re
from typing import Annotated

from netaddr import IPNetwork
from pydantic import AfterValidator

__all__ = ["Ipv4Pool", "UNUSABLE"]

_FORM = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}/[0-9]{1,2}")
_V6_FORM = re.compile(r"[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(?:/[0-9]{1,3})?")  # what an IPv6 prefix is made of
# Blocks whose addresses are not unicast a host or switch port may carry (IANA special-purpose registry)
UNUSABLE: tuple[tuple[IPNetwork, str], ...] = (
    (IPNetwork("0.0.0.0/8"), "'this network' (0.0.0.0/8)"),
    (IPNetwork("127.0.0.0/8"), "loopback (127.0.0.0/8)"),
    (IPNetwork("169.254.0.0/16"), "link-local (169.254.0.0/16)"),
    (IPNetwork("224.0.0.0/4"), "multicast (224.0.0.0/4)"),
    (IPNetwork("240.0.0.0/4"), "reserved / broadcast (240.0.0.0/4)"),
)
ALLOWED = "an IPv4 prefix A.B.C.D/N (N 8-30) without host bits, in unicast space"


def _pool(value: str) -> str:
    if _V6_FORM.fullmatch(value):
        raise ValueError(f"IPv6 is not planned here; expected {ALLOWED}")
    if not _FORM.fullmatch(value):
        raise ValueError(f"not a CIDR prefix; expected {ALLOWED}")
    address, length = value.split("/")
    if any(int(octet) > 255 or (len(octet) > 1 and octet[0] == "0") for octet in address.split(".")):
        raise ValueError(f"not an IPv4 address; expected {ALLOWED}")
    if not 8 <= int(length) <= 30:  # before netaddr, whose AddrFormatError (/33 and up) is no ValueError
        raise ValueError(f"/{int(length)} is not a usable pool; expected {ALLOWED}")
    net = IPNetwork(value)
    if str(net.cidr) != value:
        raise ValueError(f"host bits set; did you mean {net.cidr}?")
    for block, what in UNUSABLE:
        if net.first <= block.last and block.first <= net.last:
            raise ValueError(f"overlaps {what}, which is not usable unicast; expected {ALLOWED}")
    return value


Ipv4Pool = Annotated[str, AfterValidator(_pool)]
