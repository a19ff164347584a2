"""IP plan: each pool's size, what the envelope reserves, what the plan uses, and the per-SU allocations.

Usage is counted from the addresses the Plan assigned (device interfaces and PDUs), each address once;
an address belongs to the pool whose range contains it.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections import defaultdict
from typing import Any

from clusterforge.plan.objects import Plan
from clusterforge.render.gateways import gateway_rows

__all__ = ["POOL_TITLES", "ip_plan_view"]

POOL_TITLES = {"data": "data (GPU rails)", "storage": "storage", "management": "management", "oob": "out-of-band",
               "fabric_links": "fabric links (/31)", "loopbacks": "loopbacks (/32)"}
SITE = "site"
_MAX_SUBNETS_SHOWN = 3


_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"  # ipaddress's: at most 255, no leading zero
# dotted-quad IPv4 with a prefix length of at most 32 (no leading zero: ipaddress reads "/032" too, through it)
_QUAD = re.compile(rf"(?:{_OCTET}\.){{3}}{_OCTET}/(?:3[0-2]|[12]?[0-9])\Z")


def _interface(text: str) -> tuple[int, int, int, int]:
    """(IP version, address, prefix length, the address's bit count) of an interface's text, as
    ipaddress.ip_interface reads it. Dotted-quad IPv4 with a prefix (what the planner writes) is read
    here, in one regular-expression match: ipaddress's parser was most of the view's time at 512 SUs;
    anything else goes through it."""
    if _QUAD.match(text):
        address, _, length = text.partition("/")
        return 4, int.from_bytes(socket.inet_aton(address), "big"), int(length), 32
    interface = ipaddress.ip_interface(text)
    return interface.version, int(interface.ip), interface.network.prefixlen, interface.max_prefixlen


def _addresses(plan: Plan):
    """(su or None, (version, address, prefix length, bits)) for every assigned address."""
    for device in plan.devices:
        for iface in device.interfaces:
            if iface.ip:
                yield device.su, _interface(iface.ip)
    rack_su = {rack.name: rack.su for rack in plan.racks}
    for pdu in plan.pdus:
        if pdu.ip:
            yield rack_su.get(pdu.rack), _interface(pdu.ip)


def ip_plan_view(plan: Plan) -> dict[str, Any]:
    pools = []
    ranges = []
    for name, info in plan.pools.items():
        network = ipaddress.ip_network(info["pool"])
        ranges.append((int(network.network_address), int(network.broadcast_address), name))
    seen: dict[str, set[int]] = defaultdict(set)
    per_su: dict[tuple[str, str], dict[str, Any]] = {}
    for su, (version, value, prefixlen, bits) in _addresses(plan):
        pool = next((name for low, high, name in ranges if low <= value <= high), None)
        if pool is None or value in seen[pool]:
            continue
        seen[pool].add(value)
        key = (SITE if su is None else f"{su}", pool)
        cell = per_su.setdefault(key, {"count": 0, "low": value, "high": value, "subnets": set()})
        cell["count"] += 1
        cell["low"], cell["high"] = min(cell["low"], value), max(cell["high"], value)
        if prefixlen < bits - 1:  # the network as (version, first address, prefix length)
            cell["subnets"].add((version, value >> (bits - prefixlen) << (bits - prefixlen), prefixlen))
    for name, info in plan.pools.items():
        used = len(seen[name])
        size = info["size"]
        reserved = info.get("reserved_by_envelope", 0)
        block = info.get("su_block_prefix")
        pools.append({
            "name": name, "title": POOL_TITLES.get(name, name), "pool": info["pool"], "size": size,
            "reserved": reserved, "used": used, "used_fraction": used / size if size else 0.0,
            "reserved_fraction": reserved / size if size else 0.0,
            "used_of_reserved": used / reserved if reserved else 0.0,
            "su_block": f"/{block} per SU ({2 ** (32 - block):,} addresses)" if block else "",
        })
    sus = sorted({key[0] for key in per_su if key[0] != SITE}, key=int)
    rows = []
    for su in [*sus, SITE] if any(key[0] == SITE for key in per_su) else sus:
        cells: list[dict[str, Any] | None] = []
        for pool in plan.pools:
            found = per_su.get((su, pool))
            if not found:
                cells.append(None)
                continue
            subnets = [(ipaddress.IPv6Network if version == 6 else ipaddress.IPv4Network)((first, length))
                       for version, first, length in sorted(found["subnets"])]
            low, high = ipaddress.ip_address(found["low"]), ipaddress.ip_address(found["high"])
            cells.append({
                "count": found["count"],
                "range": f"{low} – {high}" if low != high else f"{low}",
                "subnets": ", ".join(str(net) for net in subnets[:_MAX_SUBNETS_SHOWN])
                           + (f" +{len(subnets) - _MAX_SUBNETS_SHOWN}" if len(subnets) > _MAX_SUBNETS_SHOWN else ""),
            })
        rows.append({"su": "site" if su == SITE else f"SU {su}", "cells": cells})
    return {"pools": pools, "pool_names": [pool["title"] for pool in pools], "rows": rows,
            "gateways": _gateway_summary(plan)}


def _gateway_summary(plan: Plan) -> list[dict[str, Any]]:
    """Per plane: method, how many host gateways, who answers them (switches, or who must, if external)."""
    out: dict[str, dict[str, Any]] = {}
    for r in gateway_rows(plan):
        entry = out.setdefault(r["plane"], {"plane": r["plane"], "method": r["method"], "count": 0, "switches": [],
                                            "external": r["external"], "provider": r["provided_by"],
                                            "unanswered": 0, "examples": []})
        entry["count"] += 1
        entry["switches"] += [s for s in r["switches"] if s not in entry["switches"]]
        entry["unanswered"] += r["provided_by"] == "nobody"
        if len(entry["examples"]) < _MAX_SUBNETS_SHOWN:
            entry["examples"].append(r["gateway"])
    return list(out.values())
