"""The site's NTP servers: each an IPv4 unicast host address or a DNS name, as timesyncd.conf(5) takes them.

A value reaches a timesyncd drop-in (``NTP=`` of space-separated names), the installer's shell line that
writes it, and Ansible's host_vars: the grammar admits no space, quote, newline or template delimiter.
A link-local address is a host address too: clouds serve NTP on one (Amazon Time Sync at 169.254.169.123).
"""

from __future__ import annotations

import re
from typing import Annotated

from netaddr import AddrFormatError, IPAddress
from pydantic import AfterValidator

__all__ = ["TimeServer", "MAX_TIME_SERVERS", "ALLOWED", "check_time_server"]

MAX_TIME_SERVERS = 8
ALLOWED = ("an IPv4 host address (e.g. 198.18.8.1) or a DNS name of dot-separated labels of a-z, 0-9 and '-'"
           " (e.g. ntp1.example.net), at most 253 characters")
_DOTTED = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")


def check_time_server(value: str) -> str:
    """VALUE when it is a time server; ValueError saying what is allowed otherwise (the installers' check too)."""
    if _DOTTED.fullmatch(value):
        try:
            ip = IPAddress(value, version=4, flags=1)  # INET_PTON: no leading zeros, four parts
        except (AddrFormatError, ValueError):
            raise ValueError(f"not an IPv4 address; allowed: {ALLOWED}") from None
        if ip.is_loopback() or ip.is_multicast() or ip.is_reserved() or int(ip) in (0, 2**32 - 1) \
                or value.startswith("0."):
            raise ValueError(f"{value} is not a unicast host address; allowed: {ALLOWED}")
        return value
    labels = value.split(".")
    if len(value) > 253 or not all(_LABEL.fullmatch(label) for label in labels) or labels[-1].isdigit():
        raise ValueError(f"not a valid time server; allowed: {ALLOWED}")
    return value


TimeServer = Annotated[str, AfterValidator(check_time_server)]
