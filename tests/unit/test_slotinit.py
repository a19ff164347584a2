"""plan/slotinit.py: the faster __init__ of the Plan's hot records takes the dataclass's parameters
and defaults, keeps the records frozen, and refuses classes it would get wrong."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from clusterforge.plan.objects import Device, Endpoint, Interface, Link
from clusterforge.plan.slotinit import slot_init
from clusterforge.render.switches._cumulus.schema import NvueInterface
from clusterforge.render.switches._eos.schema import EosEthernetInterface
from clusterforge.render.switches._frr.router_bgp import BgpNeighbor


@pytest.mark.parametrize("cls", [Interface, Endpoint, Link, Device, EosEthernetInterface, NvueInterface, BgpNeighbor])
def test_the_parameters_are_the_fields(cls):
    params = inspect.signature(cls).parameters
    fields = dataclasses.fields(cls)
    assert [p for p in params] == [f.name for f in fields]
    assert [p.default for p in params.values()] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields]


def test_records_are_built_whole_and_stay_frozen():
    iface = Interface("Ethernet0", "data", "10.0.0.0/31", 9100, peer_ip="10.0.0.1", speed_gbps=400)
    assert (iface.name, iface.ip, iface.mtu, iface.vlan, iface.peer_ip, iface.members, iface.speed_gbps) == (
        "Ethernet0", "10.0.0.0/31", 9100, None, "10.0.0.1", (), 400)
    assert iface == Interface(name="Ethernet0", plane="data", ip="10.0.0.0/31", mtu=9100, peer_ip="10.0.0.1",
                              speed_gbps=400)
    assert hash(iface) == hash(dataclasses.replace(iface))
    with pytest.raises(dataclasses.FrozenInstanceError):
        iface.mtu = 1500  # type: ignore[misc]
    with pytest.raises(TypeError):
        Endpoint("leaf-1")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Endpoint("leaf-1", "swp1", "extra")  # type: ignore[call-arg]
    link = Link(Endpoint("a", "1"), Endpoint("b", "2"), "data", 400, 9100, "dac")
    assert (link.a_ip, link.b_ip, link.tier) == (None, None, "")


def test_classes_it_would_get_wrong_are_refused():
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        x: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Factory:
        x: list = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True)
    class PostInit:
        x: int

        def __post_init__(self) -> None:
            pass

    for cls in (NoSlots, Factory, PostInit):
        with pytest.raises(TypeError):
            slot_init(cls)
