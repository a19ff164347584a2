"""Every ECMP path between host classes delivers, over the routes the rendered switch configs install.

Per routed plane (RoCE/Ethernet data, storage) of every example, its NOS variants and the examples
grown to 2/8/16/64 SUs: GPU -> GPU on the same rail and across rails, GPU -> every storage server,
storage server -> storage server. A path starts at every switch a host NIC (or bond member) is cabled
to, which must answer the host's gateway, and follows every installed next hop (rendered_routes.py)
until a switch owns the destination's subnet, which must be cabled to the destination. The gateways
of every plane (management and oob included) are tested in test_gateways.py with the same rendered
files; here server -> gateway is the first hop of every path.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache

import pytest
from fabric_examples import REPO
from gateway_reach import answered_addresses
from golden_cases import with_nos
from rendered_routes import Fabric, read_switches

from clusterforge.model import load_cluster
from clusterforge.model.scale import scaled
from clusterforge.plan import Plan, plan_cluster
from clusterforge.render.switches import render_switches
from clusterforge.vocab import DeviceKind, Plane, Transport

EXAMPLES = sorted(p.stem for p in (REPO / "inventory").glob("*.yaml"))
NOS_VARIANTS = {"eos": ("lab", "roce-128gpu", "superpod-4su"), "cumulus": ("lab", "roce-128gpu")}
GROWN = {2: EXAMPLES, 8: ("lab", "roce-128gpu", "superpod-4su"), 16: ("superpod-4su", "dgx-b200-su"),
         64: ("lab", "superpod-4su")}


@cache
def _spec(name: str):
    return load_cluster(REPO / "inventory" / f"{name}.yaml")[0]


def _case(case: str) -> Plan:
    name, _, variant = case.partition("@")
    spec = _spec(name)
    if variant.endswith("su"):
        spec = scaled(spec, int(variant[:-2]))
    elif variant:
        spec = with_nos(spec, variant, ("data", "storage", "management", "oob"))
    return plan_cluster(spec)


CASES = [*EXAMPLES, *(f"{n}@{nos}" for nos, names in NOS_VARIANTS.items() for n in names),
         *(f"{n}@{sus}su" for sus, names in GROWN.items() for n in names)]


class Endpoint:
    """A host NIC on one plane: its address, the switches its ports land on, the address it sends through."""

    def __init__(self, host: str, kind: str, address: str, first_hop: str, rail: int | None):
        self.host, self.kind, self.address, self.first_hop, self.rail = host, kind, address, first_hop, rail
        self.switches: list[str] = []


def _endpoints(plan: Plan, plane: str) -> list[Endpoint]:
    out: dict[tuple[str, str], Endpoint] = {}
    port_of: dict[tuple[str, str], Endpoint] = {}
    for d in plan.devices:
        if d.kind not in (DeviceKind.SERVER, DeviceKind.STORAGE):
            continue
        for iface in d.interfaces:
            hop = iface.gateway or iface.peer_ip
            if iface.plane == plane and iface.ip and hop:
                e = Endpoint(d.name, d.kind, iface.ip.split("/")[0], hop, iface.rail)
                out[(d.name, iface.name)] = e
                for port in (iface.name, *iface.members):
                    port_of[(d.name, port)] = e
    for link in plan.links:
        e = port_of.get((link.a.device, link.a.port))
        if e is not None and link.plane == plane:
            e.switches.append(link.b.device)
    return list(out.values())


def _targets(endpoints: list[Endpoint]) -> list[Endpoint]:
    """Every storage server; per rail, the GPU servers' first and last NIC (the first and last SU)."""
    storage = [e for e in endpoints if e.kind == DeviceKind.STORAGE]
    by_rail: dict[int | None, list[Endpoint]] = defaultdict(list)
    for e in endpoints:
        if e.kind == DeviceKind.SERVER:
            by_rail[e.rail].append(e)
    return storage + [e for nics in by_rail.values() for e in {id(n): n for n in (nics[0], nics[-1])}.values()]


def _black_holes(plan: Plan, files: dict[str, str], plane: str) -> tuple[int, int, list[str]]:
    """(endpoints, paths walked, failing paths) of one plane."""
    switches = read_switches(plan, files, (plane,))
    endpoints = _endpoints(plan, plane)
    attached: dict[str, set[str]] = defaultdict(set)
    for e in endpoints:
        for s in e.switches:
            attached[s].add(e.address)
    fabric = Fabric(switches, attached)
    nos = plan.plane(plane).nos
    per: dict[str, dict[str, str]] = defaultdict(dict)
    for path, text in files.items():
        parts = path.split("/")
        if len(parts) == 3 and parts[1] in switches:
            per[parts[1]][parts[2]] = text
    answers = {name: answered_addresses(nos, per[name]) for name in switches}
    problems: list[str] = []
    walked = 0
    targets = _targets(endpoints)
    for source in endpoints:
        for switch in source.switches:  # every bond member is a path start
            if source.first_hop not in answers.get(switch, ()):
                problems.append(f"{source.host} -> {switch}: the switch does not answer {source.first_hop}")
                continue
            for dest in targets:
                if dest is source:
                    continue
                walked += 1
                verdict = fabric.walk(switch, dest.address)
                if verdict is not None:
                    problems.append(f"{source.host} -> {dest.host}: {verdict}")
    return len(endpoints), walked, problems


@cache
def _rendered(case: str) -> tuple[Plan, dict[str, str]]:
    plan = _case(case)
    return plan, render_switches(plan)


@pytest.mark.parametrize("case", CASES)
def test_every_path_between_host_classes_delivers(case):
    plan, files = _rendered(case)
    planes = [Plane.STORAGE] + ([Plane.DATA] if plan.plane(Plane.DATA).transport != Transport.INFINIBAND else [])
    for plane in planes:
        endpoints, walked, problems = _black_holes(plan, files, plane)
        assert walked or endpoints < 2, f"{case} {plane}: {endpoints} hosts but no path walked"
        assert problems == [], f"{case} {plane}: {len(problems)} failing paths, first: {problems[:3]}"
