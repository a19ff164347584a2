"""Deterministic, collision-resistant short names for everything the lab creates.

Linux interface names are limited to 15 bytes, so root-namespace links are named
``cf<tag><kind><hash>`` where ``tag`` is 5 hex digits derived from the lab name (so every
link of a lab shares the prefix ``cf<tag>`` and can be found again after a crash) and
``hash`` is derived from what the link is for.  Each link also carries an ``ifalias``
``cf:<lab>:<purpose>`` for humans (``ip -d link``).  Network namespaces have no length
limit: ``cf-<lab>.<host>`` (labels contain no dots, so the prefix is unambiguous).
"""

from __future__ import annotations

import hashlib

IFNAMSIZ = 15


def _h(*parts: str, n: int) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:n]


def lab_tag(lab: str) -> str:
    return _h("lab", lab, n=5)


def link_prefix(lab: str) -> str:
    """Every root-namespace link of ``lab`` starts with this."""
    return f"cf{lab_tag(lab)}"


def netns_prefix(lab: str) -> str:
    return f"cf-{lab}."


def netns_name(lab: str, host: str) -> str:
    return f"{netns_prefix(lab)}{host}"


def bridge_name(lab: str, segment: str) -> str:
    return f"{link_prefix(lab)}b{_h('br', segment, n=7)}"


def veth_peer_name(lab: str, host: str, ifname: str) -> str:
    """Root-namespace end of a host's veth on a bridge segment."""
    return f"{link_prefix(lab)}v{_h('veth', host, ifname, n=7)}"


def alias(lab: str, purpose: str) -> str:
    return f"cf:{lab}:{purpose}"


for _n in (bridge_name("x", "y"), veth_peer_name("x", "y", "z")):
    assert len(_n) <= IFNAMSIZ, _n
