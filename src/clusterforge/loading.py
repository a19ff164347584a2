"""The edge between files and the pure core: load + plan + fabric checks, every failure as file:line problems.

Every command goes through load_and_plan, so a declaration that `validate` refuses is refused by
plan, render, report, diff, lab and preview/up alike.
"""

from __future__ import annotations

import re
from pathlib import Path

from clusterforge.fanout import default_workers, fan_out
from clusterforge.gcpause import paused_gc
from clusterforge.model import PLANES, ClusterSpec, DeclarationError, Loc, SourceMap, load_cluster
from clusterforge.model.errors import Problem
from clusterforge.plan import Plan, PlanError, plan_cluster
from clusterforge.vocab import DeviceKind

__all__ = ["load_and_plan", "DeclarationError", "fabric_loc", "asn_problems"]


def fabric_loc(message: str) -> Loc:
    """The declared field a fabric-check sentence is about: the plane's oversubscription, the plane, or networks."""
    first = message.split(" ", 1)[0]
    if first in PLANES:
        return ("networks", first, "oversubscription")
    for plane in PLANES:
        if f"({plane})" in message or f"the {plane} plane" in message or f" on {plane}" in message:
            return ("networks", plane)
    return ("networks",)


_LINK = re.compile(r"^link \S+ <-> \S+: (?P<device>[^\s:]+)(?::(?P<port>\S+))? (?P<what>.*)$")
_TIER_FIELD = {DeviceKind.LEAF: "leaf_model", DeviceKind.SPINE: "spine_model", DeviceKind.CORE: "core_model"}


def link_loc(message: str, plan: Plan, spec: ClusterSpec | None = None) -> tuple[Loc, str] | None:
    """(field, note) of a per-link problem: the declared field that made the offending end; None when the sentence
    is not about a link. A switch end is its model field on its plane; a host end is the inventory line that put
    that server model on the plane (the SU's, storage's or control's ``server_model``), the note naming the catalog
    NIC group it meets the switch with: a change to the inventory is reported in the inventory, not in a catalog
    file the change did not touch."""
    match = _LINK.match(message)
    if match is None:
        return None
    try:
        device = plan.device(match["device"])
    except KeyError:
        return None
    if device.plane is not None and device.kind in _TIER_FIELD:
        return ("networks", device.plane, _TIER_FIELD[device.kind]), ""
    port = match["port"] or ""
    iface = next((i for i in device.interfaces if i.name == port or port in i.members), None)
    if iface is None or device.kind not in (DeviceKind.SERVER, DeviceKind.STORAGE, DeviceKind.CONTROL):
        return None
    field = "speed_gbps" if "Gb/s" in match["what"] else "count"
    catalog: Loc = ("catalog", "servers", device.model, "nics", iface.plane, field)
    note = f" (server model {device.model}: catalog.servers.{device.model}.nics.{iface.plane}.{field})"
    if spec is None:
        return catalog, ""
    if device.kind == DeviceKind.STORAGE:
        return ("storage", "server_model"), note
    if device.kind == DeviceKind.CONTROL:
        return ("control", "server_model"), note
    index = next((i for i, unit in enumerate(spec.scalable_units) if unit.id == device.su), None)
    return (("scalable_units", index, "server_model"), note) if index is not None else (catalog, "")


ASN_MAX = 4_294_967_294  # 4-byte ASNs; 4294967295 is reserved (RFC 7300)


def asn_problems(plan: Plan) -> list[tuple[Loc, str]]:
    """Planned ASNs fit 4 bytes, and no leaf shares one with a spine or core (eBGP would drop the routes)."""
    problems: list[tuple[Loc, str]] = []
    leaves: dict[int, str] = {}
    others: dict[int, str] = {}
    for device in plan.devices:
        asn = getattr(device, "asn", None)
        if asn is None:
            continue
        if asn > ASN_MAX:
            field = ("leaf_base" if device.kind == DeviceKind.LEAF
                     else "core" if device.kind == DeviceKind.CORE else "spine_base")
            problems.append((("networks", "asn", field), f"{device.name} would get ASN {asn}, above {ASN_MAX}"))
            break
        (leaves if device.kind == DeviceKind.LEAF else others).setdefault(asn, device.name)
    clash = sorted(set(leaves) & set(others))
    if clash:
        problems.append((("networks", "asn"), f"leaf {leaves[clash[0]]} and {others[clash[0]]} share ASN {clash[0]}"
                         f" ({len(clash)} ASNs shared); keep leaf_base, spine_base and core ranges apart"))
    return problems


PARALLEL_CHECK_LINKS = 100_000  # from this many links the fabric checks' two halves run on two cores


def _fabric_problems(plan: Plan) -> list[str]:
    """plan.fabric_checks.check_fabric, its halves on two cores for a large plan (a fork costs ~50 ms)."""
    from clusterforge.plan.fabric_checks import CHECK_PARTS

    workers = default_workers() if len(plan.links) >= PARALLEL_CHECK_LINKS else 1
    return [problem for found in fan_out(lambda part: part(plan), CHECK_PARTS, min(workers, len(CHECK_PARTS)))
            for problem in found]


def load_and_plan(path: str | Path) -> tuple[ClusterSpec, Plan, SourceMap]:
    with paused_gc():  # millions of long-lived objects, no cycles: the collector would only walk them
        return _load_and_plan(path)


def _load_and_plan(path: str | Path) -> tuple[ClusterSpec, Plan, SourceMap]:
    spec, source = load_cluster(path)
    try:
        plan = plan_cluster(spec)
    except PlanError as exc:
        raise DeclarationError([source.problem(loc, message) for loc, message in exc.problems]) from None
    from clusterforge.plan.sonic_checks import sonic_declaration_problems

    sonic = sonic_declaration_problems(spec, plan)  # port speeds and lossless headroom the HWSKU allows
    if sonic:
        raise DeclarationError([source.problem(loc, message) for loc, message in sonic])
    located = asn_problems(plan)
    if not located:
        from clusterforge.plan.prefix_reach import prefix_problems

        located = prefix_problems(plan)  # every subnet answered only where its hosts are cabled
    if located:
        raise DeclarationError([source.problem(loc, message) for loc, message in located])
    problems = _fabric_problems(plan)
    if problems:
        fabric: list[Problem] = []
        for message in problems:
            loc, note = link_loc(message, plan, spec) or (fabric_loc(message), "")
            fabric.append(source.problem(loc, f"fabric: {message}{note}"))
        raise DeclarationError(fabric)
    return spec, plan, source
