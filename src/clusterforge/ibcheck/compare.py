"""What the diagnostics found, against the plan: pure parsing and comparison, no processes.

`ibnetdiscover`'s topology file names every node by its node GUID ("S-<guid>", "H-<guid>") and every
cabled port by `[port] "<peer id>"[peer port]`; the plan's GUIDs (plan/ib_subnet.py) name the planned
node each discovered GUID stands for. `dump_fts` lists each switch's linear forwarding table: LID, out
port, and the port GUID owning the LID. Routing is complete when, following those tables from every HCA's
switch, every HCA's LID is reached on the HCA's own port.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from clusterforge.plan.ib_subnet import IbCable, IbSubnet

__all__ = ["Discovered", "Tables", "LinkDiff", "parse_ibnetdiscover", "parse_dump_fts", "compare_links",
           "unreachable_pairs", "planned_ends", "parse_pkeys", "parse_sminfo"]

End = tuple[int, int]  # (node GUID, port number)

_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-([0-9a-fA-F]{16})"')
_PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-fA-F]+\))?\s+"([SHR])-([0-9a-fA-F]{16})"\[(\d+)\]')
_FTS_SWITCH = re.compile(r"^Unicast lids \[[^\]]*\] of switch .* guid 0x([0-9a-fA-F]{16})")
_FTS_ROW = re.compile(r"^0x([0-9a-fA-F]+)\s+(\d+)\s+:\s+\((?:Switch|Channel Adapter|Router) portguid 0x([0-9a-fA-F]+)")
_SMINFO = re.compile(r"priority (\d+) state \d+ SMINFO_(\w+)")
_PKEY_WORD = re.compile(r"0x([0-9a-fA-F]{4})")


@dataclass(frozen=True)
class Discovered:
    nodes: dict[int, tuple[str, int]]  # node GUID -> (Switch|Ca|Rt, ports)
    links: frozenset[frozenset[End]]


@dataclass(frozen=True)
class Tables:
    lfts: dict[int, dict[int, int]]  # switch GUID -> {LID: out port}
    lid_owner: dict[int, int]  # LID -> port GUID


@dataclass(frozen=True)
class LinkDiff:
    planned: int
    discovered: int
    missing: tuple[str, ...]  # "a <-> b", the plan's names
    unexpected: tuple[str, ...]
    miswired: tuple[str, ...] = field(default=())  # swapped pairs, named


def parse_ibnetdiscover(text: str) -> Discovered:
    nodes: dict[int, tuple[str, int]] = {}
    links: set[frozenset[End]] = set()
    current: int | None = None
    for line in text.splitlines():
        node = _NODE.match(line)
        if node:
            current = int(node.group(4), 16)
            nodes[current] = (node.group(1), int(node.group(2)))
            continue
        port = _PORT.match(line)
        if port and current is not None:
            links.add(frozenset({(current, int(port.group(1))), (int(port.group(3), 16), int(port.group(4)))}))
    return Discovered(nodes, frozenset(links))


def parse_dump_fts(text: str) -> Tables:
    lfts: dict[int, dict[int, int]] = {}
    owner: dict[int, int] = {}
    table: dict[int, int] | None = None
    for line in text.splitlines():
        switch = _FTS_SWITCH.match(line)
        if switch:
            table = lfts.setdefault(int(switch.group(1), 16), {})
            continue
        row = _FTS_ROW.match(line)
        if row and table is not None:
            lid = int(row.group(1), 16)
            table[lid] = int(row.group(2))
            owner[lid] = int(row.group(3), 16)
    return Tables(lfts, owner)


def parse_sminfo(text: str) -> tuple[int | None, str]:
    """(priority, state) from `sminfo`: state MASTER, STANDBY, ..., or UNKNOWN when it did not answer."""
    found = _SMINFO.search(text)
    return (int(found.group(1)), found.group(2)) if found else (None, "UNKNOWN")


def parse_pkeys(text: str) -> set[int]:
    """The P_Keys in a `saquery PKTR` dump (0 is an empty slot)."""
    keys: set[int] = set()
    for line in text.splitlines():
        if line.strip().startswith("0x") and "." not in line:
            keys |= {int(k, 16) for k in _PKEY_WORD.findall(line)}
    return keys - {0}


def planned_ends(subnet: IbSubnet, cables: Iterable[IbCable] | None = None) -> dict[frozenset[End], IbCable]:
    guid = {n.node_id: n.guid for n in subnet.nodes}
    return {frozenset({(guid[c.a[0]], c.a[1]), (guid[c.b[0]], c.b[1])}): c
            for c in (subnet.cables if cables is None else cables)}


def _namer(subnet: IbSubnet) -> dict[End, str]:
    names: dict[End, str] = {}
    for cable in subnet.cables:
        for (node_id, port), name in ((cable.a, cable.a_name), (cable.b, cable.b_name)):
            names[(subnet.node(node_id).guid, port)] = name
    return names


def _end_name(names: dict[End, str], subnet_guids: dict[int, str], end: End) -> str:
    if end in names:
        return names[end]
    node = subnet_guids.get(end[0])
    return f"{node} port {end[1]}" if node else f"unplanned GUID 0x{end[0]:016x} port {end[1]}"


def compare_links(subnet: IbSubnet, found: Discovered) -> LinkDiff:
    """Planned cables against discovered links; two missing and two unexpected links that exchange ends are
    one swap, named by its four ports."""
    planned = planned_ends(subnet)
    names = _namer(subnet)
    guids = {n.guid: n.node_id for n in subnet.nodes}

    def link_name(link: frozenset[End]) -> str:
        a, b = sorted(link)
        return " <-> ".join(sorted((_end_name(names, guids, a), _end_name(names, guids, b))))

    missing = [link for link in planned if link not in found.links]
    unexpected = [link for link in found.links if link not in planned]
    peer = {end: other for link in planned for end, other in ((min(link), max(link)), (max(link), min(link)))}
    swaps: list[str] = []
    used: set[frozenset[End]] = set()
    for link in unexpected:
        if link in used or len(link) != 2:
            continue
        x, y = sorted(link)
        if x not in peer or y not in peer:
            continue
        partner = frozenset({peer[x], peer[y]})
        if partner in found.links and partner in unexpected and partner not in used:
            used |= {link, partner}
            swaps.append(f"swapped: planned {link_name(frozenset({x, peer[x]}))} and "
                         f"{link_name(frozenset({y, peer[y]}))}, found {link_name(link)} and {link_name(partner)}")
    return LinkDiff(len(planned), len(found.links), tuple(sorted(link_name(m) for m in missing)),
                    tuple(sorted(link_name(u) for u in unexpected)), tuple(sorted(swaps)))


def unreachable_pairs(subnet: IbSubnet, found: Discovered, tables: Tables) -> list[tuple[str, str]]:
    """(source HCA, destination HCA) pairs the switches' forwarding tables do not carry, following the tables
    from the source's switch over the discovered links to the destination's port."""
    peer: dict[End, End] = {}
    for link in found.links:
        if len(link) == 2:
            a, b = sorted(link)
            peer[a], peer[b] = b, a
    hcas = [n for n in subnet.nodes if n.kind == "hca"]
    lid_of = {port: lid for lid, port in tables.lid_owner.items()}
    bad: list[tuple[str, str]] = []
    for dst in hcas:
        dst_port = dst.guid + 1
        dlid = lid_of.get(dst_port)
        reaches: dict[int, bool] = {}

        def switch_reaches(guid: int, hops: int, dlid: int | None = dlid, dst_port: int = dst_port,
                           reaches: dict[int, bool] = reaches) -> bool:
            if guid in reaches:
                return reaches[guid]
            reaches[guid] = False  # a loop reads as unreachable
            out = tables.lfts.get(guid, {}).get(dlid) if dlid is not None else None
            far = peer.get((guid, out)) if out else None
            ok = False
            if far is not None and hops < 64:
                kind = found.nodes.get(far[0], ("", 0))[0]
                ok = (far[0] + far[1] == dst_port) if kind == "Ca" else (
                    kind == "Switch" and switch_reaches(far[0], hops + 1))
            reaches[guid] = ok
            return ok

        for src in hcas:
            if src is dst:
                continue
            first = peer.get((src.guid, 1))
            ok = dlid is not None and first is not None and (
                first[0] + first[1] == dst_port if found.nodes.get(first[0], ("", 0))[0] == "Ca"
                else switch_reaches(first[0], 0))
            if not ok:
                bad.append((src.node_id, dst.node_id))
    return bad
