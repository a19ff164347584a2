"""The report's IP plan reads interface addresses itself (the planner's dotted-quad IPv4 with a prefix) and
hands anything else to ipaddress: what it reads equals ipaddress.ip_interface's reading, a text ipaddress
refuses is still refused, and the view of the example Plans equals the one built from ipaddress objects."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.render.report import ipplan

ROOT = Path(__file__).parents[2]
TEXTS = ("10.0.0.1/031", "10.0.0.1/08", "10.0.0.1/31", "10.0.0.0/8", "0.0.0.0/0", "255.255.255.255/32",
         "192.168.1.7/24", "10.1.2.3", "10.1.2.3/30", "fd00::1/64", "2001:db8::/32", "::1", "172.16.0.9/0",
         "199.249.250.255/29", "100.64.9.99/12", "1.20.200.2/32")
REFUSED = ("010.0.0.1/31", "10.0.0.256/24", "10.0.0.1/33", "10.0.0/24", "10.0.0.1/", "1.2.3.4/ 8", "x.1.2.3/8",
           "10.0.0.1/٣", "1.2.3.4/32\n", "1.2.3.4 /8", "1.2.3.04/8", "256.1.1.1/8")


def reference(text: str) -> tuple[int, int, int, int]:
    interface = ipaddress.ip_interface(text)
    return interface.version, int(interface.ip), interface.network.prefixlen, interface.max_prefixlen


@pytest.mark.parametrize("text", TEXTS)
def test_reads_as_ipaddress_does(text: str):
    assert ipplan._interface(text) == reference(text)


@pytest.mark.parametrize("text", REFUSED)
def test_refuses_what_ipaddress_refuses(text: str):
    with pytest.raises(ValueError):
        ipaddress.ip_interface(text)
    with pytest.raises(ValueError):
        ipplan._interface(text)


def _reference_view(plan) -> list:
    """The per-SU subnets column computed the old way: ipaddress networks, sorted, first three shown."""
    ranges = [(int(n.network_address), int(n.broadcast_address), name)
              for name, n in ((name, ipaddress.ip_network(info["pool"])) for name, info in plan.pools.items())]
    seen: dict[str, set[int]] = {}
    subnets: dict[tuple[str, str], set] = {}
    texts = [(d.su, i.ip) for d in plan.devices for i in d.interfaces if i.ip]
    rack_su = {rack.name: rack.su for rack in plan.racks}
    texts += [(rack_su.get(p.rack), p.ip) for p in plan.pdus if p.ip]
    for su, text in texts:
        interface = ipaddress.ip_interface(text)
        value = int(interface.ip)
        pool = next((name for low, high, name in ranges if low <= value <= high), None)
        if pool is None or value in seen.setdefault(pool, set()):
            continue
        seen[pool].add(value)
        cell = subnets.setdefault(("site" if su is None else f"{su}", pool), set())
        if interface.network.prefixlen < interface.max_prefixlen - 1:
            cell.add(interface.network)
    return sorted((key, [str(n) for n in sorted(nets)][:3]) for key, nets in subnets.items())


@pytest.mark.parametrize("example", ("lab.yaml", "roce-128gpu.yaml", "superpod-4su.yaml"))
def test_view_subnets_match_ipaddress(example: str):
    _, plan, _ = load_and_plan(ROOT / "inventory" / example)
    view = ipplan.ip_plan_view(plan)
    shown = sorted(cell["subnets"] for row in view["rows"] for cell in row["cells"] if cell)
    expected = sorted(", ".join(nets) for _, nets in _reference_view(plan))
    assert [s.split(" +")[0] for s in shown] == expected
