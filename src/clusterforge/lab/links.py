"""Layer 2 plumbing: Linux bridges for ``bridge`` segments, veth pairs, VLANs, MTUs, addresses.

* bridge segment: a Linux bridge in the root namespace (MTU = segment MTU); each member
  host gets a veth whose namespace end carries the planned interface name and whose
  root end is a bridge port.
* p2p segment: one veth directly between the two hosts' namespaces; no bridge.
* control endpoint: the control address sits on the management bridge itself, so this
  machine reaches every host's management address.
* VLAN tags are not emulated: each segment is already its own bridge (its own broadcast
  domain), which is the separation a VLAN gives; and kernels such as this lab machine's
  have neither 802.1Q nor bridge VLAN filtering.  Interfaces with ``vlan`` come up
  untagged (see :func:`vlan_note`).

Every function here is idempotent: it inspects what exists and creates only what is missing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from . import names
from .topology import LabInterface, LabRoute, LabSegment
from .util import LabError, run


@dataclass(frozen=True)
class Endpoint:
    """A planned interface placed in a host's namespace."""

    host: str
    netns: str
    iface: LabInterface


def root_links() -> dict[str, dict]:
    """Links of this machine's root namespace by name (``ip -d link``: kind, alias)."""
    return _links()


def _links(netns: str | None = None) -> dict[str, dict]:
    argv = ["ip", "-j", "-d"] + (["-n", netns] if netns else []) + ["link", "show"]
    out = run(argv).stdout
    return {link["ifname"]: link for link in json.loads(out or "[]")}


def _addrs(netns: str | None, dev: str) -> set[str]:
    argv = ["ip", "-j"] + (["-n", netns] if netns else []) + ["addr", "show", "dev", dev]
    out = run(argv).stdout
    have = set()
    for link in json.loads(out or "[]"):
        for a in link.get("addr_info", []):
            have.add(f"{a['local']}/{a['prefixlen']}")
    return have


def _ip(netns: str | None, *args: str | int) -> None:
    run(["ip"] + (["-n", netns] if netns else []) + [str(a) for a in args])


def ensure_bridge(lab: str, seg: LabSegment) -> tuple[str, bool]:
    """The segment's bridge (created with the segment MTU, STP off, up). Returns (name, created)."""
    br = names.bridge_name(lab, seg.name)
    created = br not in _links()
    if created:
        _ip(None, "link", "add", "name", br, "type", "bridge", "stp_state", "0", "forward_delay", "0")
        _ip(None, "link", "set", "dev", br, "alias", names.alias(lab, f"segment={seg.name}"))
    _ip(None, "link", "set", "dev", br, "mtu", seg.mtu, "up")
    return br, created


def vlan_note(ifaces: list[LabInterface]) -> str | None:
    """A message when planned VLAN tags are present (they are carried untagged in the lab)."""
    tagged = sorted({f"{i.name}:{i.vlan}" for i in ifaces if i.vlan})
    if not tagged:
        return None
    return "VLAN tags not emulated (each segment is its own bridge); untagged: " + ", ".join(tagged)


def _finish_endpoint(ep: Endpoint) -> bool:
    """MTU, link up, planned address. True when the address was added."""
    changed = False
    _ip(ep.netns, "link", "set", "dev", ep.iface.name, "mtu", ep.iface.mtu, "up")
    if ep.iface.ip not in _addrs(ep.netns, ep.iface.name):
        _ip(ep.netns, "addr", "add", ep.iface.ip, "dev", ep.iface.name)
        changed = True
    return changed


def ensure_bridge_port(lab: str, ep: Endpoint, seg: LabSegment) -> bool:
    """veth between the host namespace and the segment bridge. True when something was created."""
    br = names.bridge_name(lab, seg.name)
    peer = names.veth_peer_name(lab, ep.host, ep.iface.name)
    created = False
    if ep.iface.name not in _links(ep.netns):
        # a stale root end (namespace deleted under it) would block re-creation
        run(["ip", "link", "del", "dev", peer], check=False)
        _ip(
            None, "link", "add", "name", ep.iface.name, "netns", ep.netns, "mtu", ep.iface.mtu,
            "type", "veth", "peer", "name", peer, "mtu", seg.mtu,
        )  # fmt: skip
        _ip(None, "link", "set", "dev", peer, "alias", names.alias(lab, f"{ep.host}/{ep.iface.name}"))
        created = True
    _ip(None, "link", "set", "dev", peer, "master", br, "mtu", seg.mtu, "up")
    return _finish_endpoint(ep) or created


def ensure_p2p(lab: str, seg: LabSegment, a: Endpoint, b: Endpoint) -> bool:
    """One veth straight between two host namespaces. True when something was created."""
    end_a, end_b = a.iface.name, b.iface.name
    have_a, have_b = end_a in _links(a.netns), end_b in _links(b.netns)
    created = False
    if not (have_a and have_b):
        if have_a:
            _ip(a.netns, "link", "del", "dev", end_a)
        if have_b:
            _ip(b.netns, "link", "del", "dev", end_b)
        _ip(
            a.netns, "link", "add", "name", end_a, "mtu", a.iface.mtu,
            "type", "veth", "peer", "name", end_b, "netns", b.netns, "mtu", b.iface.mtu,
        )  # fmt: skip
        created = True
    ca = _finish_endpoint(a)
    cb = _finish_endpoint(b)
    return created or ca or cb


def ensure_control(lab: str, addresses: list[tuple[str, str]]) -> bool:
    """Put this machine's addresses ((CIDR, bridge segment) pairs) on the segments' bridges."""
    created = False
    have_links = _links()
    for cidr, segment in addresses:
        dev = names.bridge_name(lab, segment)
        if dev not in have_links:
            raise LabError(f"bridge {dev} of segment {segment} does not exist (control address {cidr})")
        if cidr not in _addrs(None, dev):
            _ip(None, "addr", "add", cidr, "dev", dev)
            created = True
    return created


def ensure_routes(netns: str, routes: tuple[LabRoute, ...]) -> bool:
    """Install static routes in a host namespace (``ip route replace``). True when any was missing."""
    if not routes:
        return False
    before = run(["ip", "-n", netns, "route", "show", "table", "main"]).stdout
    for r in routes:
        argv = ["route", "replace", r.dst]
        if r.via:
            argv += ["via", r.via]
        if r.dev:
            argv += ["dev", r.dev]
        if r.metric is not None:
            argv += ["metric", str(r.metric)]
        _ip(netns, *argv)
    return run(["ip", "-n", netns, "route", "show", "table", "main"]).stdout != before


def lab_root_links(lab: str) -> list[dict]:
    """Root-namespace links that belong to ``lab`` (by name prefix or alias)."""
    pre, al = names.link_prefix(lab), names.alias(lab, "")
    return [
        link for name, link in _links().items() if name.startswith(pre) or str(link.get("ifalias", "")).startswith(al)
    ]


def delete_lab_links(lab: str, extra: Sequence[str] = ()) -> list[str]:
    """Delete the lab's root-namespace links (ports and VLANs first, then bridges)."""
    found = {link["ifname"]: link for link in lab_root_links(lab)}
    for name in extra:
        found.setdefault(name, {"ifname": name})

    def is_bridge(link: dict) -> bool:
        return link.get("linkinfo", {}).get("info_kind") == "bridge"

    order = sorted(found.values(), key=is_bridge)
    gone = []
    for link in order:
        if run(["ip", "link", "del", "dev", link["ifname"]], check=False).returncode == 0:
            gone.append(link["ifname"])
    return gone


def ns_addresses(netns: str) -> dict[str, list[str]]:
    """Interface → addresses (CIDR) inside a namespace, loopback excluded."""
    out = run(["ip", "-j", "-n", netns, "addr", "show"], check=False).stdout
    res: dict[str, list[str]] = {}
    for link in json.loads(out or "[]"):
        if link.get("ifname") == "lo":
            continue
        res[link["ifname"]] = [
            f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", []) if a.get("scope") != "link"
        ]
    return res
