"""What a lab leaves behind when its processes are killed without ``down``.

A session that ends hard, or a machine snapshot taken while a lab ran, kills every container but
leaves the kernel objects: network namespaces under /run/netns, root-namespace bridges still
holding their control addresses (so this machine routes the lab's subnets into a dead bridge),
and overlay mounts.  The lab's state file may sit in another lab home, or its home may be gone.

This module finds such labs by the names the lab gives its objects (``names``), never by state:
a lab with no live process is debris and may be cleared; a lab with one is running and is left
alone.  ``manager.up`` clears the debris that stands in its way and says so.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from pathlib import Path

from . import aptproxy, container, links, names, netns, overlay, timeserve
from .util import run

__all__ = ["Cleared", "Holder", "address_holders", "clear", "lab_mounts", "live_pids", "present_labs"]


@dataclass(frozen=True)
class Holder:
    """A root-namespace address in one of the wanted subnets, on a link this lab does not own."""

    cidr: str  # the address as held, e.g. 198.18.8.1/27
    wanted: str  # the control address it overlaps
    dev: str
    lab: str | None  # the lab that made the link (from its alias), None for a link no lab made


@dataclass(frozen=True)
class Cleared:
    lab: str
    netns: tuple[str, ...]
    links: tuple[str, ...]
    mounts: tuple[str, ...]

    def summary(self) -> str:
        return (f"{len(self.netns)} namespaces, {len(self.links)} links, {len(self.mounts)} mounts"
                f" of lab {self.lab!r}")


def _alias_lab(alias: str) -> str | None:
    """The lab named by a link alias ``cf:<lab>:<purpose>``."""
    parts = alias.split(":")
    return parts[1] if len(parts) >= 3 and parts[0] == "cf" and parts[1] else None


def present_labs() -> set[str]:
    """Every lab with a namespace or an aliased root-namespace link on this machine, live or not."""
    found = set()
    for ns in netns.list_all():
        if ns.startswith("cf-") and "." in ns:
            found.add(ns[3:].split(".", 1)[0])
    for link in links.root_links().values():
        lab = _alias_lab(str(link.get("ifalias") or ""))
        if lab:
            found.add(lab)
    return found


def lab_mounts(lab: str, mounts_text: str | None = None) -> list[Path]:
    """Overlay roots of ``lab`` in any lab home: source ``cf-<lab>-<host>`` mounted on
    ``<home>/<lab>/hosts/<host>/root``."""
    text = mounts_text if mounts_text is not None else Path("/proc/mounts").read_text()
    found = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 3 or f[2] != "overlay":
            continue
        target = Path(overlay.mount_field(f[1]))
        parts = target.parts
        if (len(parts) >= 4 and parts[-1] == "root" and parts[-3] == "hosts" and parts[-4] == lab
                and f[0] == f"cf-{lab}-{parts[-2]}"):
            found.append(target)
    return found


def live_pids(lab: str) -> list[int]:
    """Processes of ``lab`` still alive: in one of its namespaces, rooted in one of its overlays,
    an nspawn booting one, or in its cgroups."""
    items: list[tuple[int | None, Path, str]] = [(None, Path("/nonexistent"), ns) for ns in netns.list_lab(lab)]
    items += [(None, root, names.netns_name(lab, root.parent.name)) for root in lab_mounts(lab)]
    return container.leftover_pids(items, container.lab_cgroups(lab))


def address_holders(lab: str, wanted: list[str]) -> list[Holder]:
    """Root-namespace addresses overlapping any of ``wanted`` (CIDRs) on links ``lab`` did not make.

    An overlap, not only the same address: a dead bridge holding 198.18.8.1/27 takes the route
    for 198.18.8.0/27 from a new lab's 198.18.8.254/24, and its hosts no longer answer."""
    nets = {c: ipaddress.ip_interface(c).network for c in wanted}
    ours = names.link_prefix(lab)
    out = run(["ip", "-j", "addr", "show"]).stdout
    by_dev = links.root_links()
    held = []
    for link in json.loads(out or "[]"):
        dev = link.get("ifname", "")
        alias_lab = _alias_lab(str(by_dev.get(dev, {}).get("ifalias") or ""))
        if dev.startswith(ours) or alias_lab == lab:
            continue
        for a in link.get("addr_info", []):
            if a.get("family") != "inet":
                continue
            have = ipaddress.ip_interface(f"{a['local']}/{a['prefixlen']}")
            for cidr, net in nets.items():
                if have.network.overlaps(net):
                    held.append(Holder(str(have), cidr, dev, alias_lab))
    return held


def _link_addresses(devs: set[str]) -> set[str]:
    out = run(["ip", "-j", "addr", "show"]).stdout
    return {a["local"] for link in json.loads(out or "[]") if link.get("ifname") in devs
            for a in link.get("addr_info", []) if a.get("family") == "inet"}


def clear(lab: str) -> Cleared:
    """Remove what ``lab`` left: an apt proxy still bound to one of its addresses, its namespaces, its
    root-namespace links, its overlay mounts in any home. The caller has made sure nothing of it
    lives (``live_pids``)."""
    held = _link_addresses({link["ifname"] for link in links.lab_root_links(lab)})
    for pid in aptproxy.serving_on(held):  # a proxy outlives the containers: it would hold its address:port
        aptproxy.stop(pid)
    for pid in timeserve.serving_on(held):  # so does the NTP server
        timeserve.stop(pid)
    gone_links = links.delete_lab_links(lab)
    gone_ns = []
    for ns in netns.list_lab(lab):
        netns.delete(ns)
        gone_ns.append(ns)
    gone_mounts = []
    for root in lab_mounts(lab):
        gone_mounts += [str(p) for p in overlay.unmount_all(root)]
    return Cleared(lab, tuple(gone_ns), tuple(gone_links), tuple(gone_mounts))
