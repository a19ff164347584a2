"""What the planners know of a NOS is data they are given (clusterforge.nos.NosTraits), and every NOS
folder is in the driver table with that same record."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

from clusterforge.model import load_cluster
from clusterforge.nos import NOS_TRAITS, NosTraits
from clusterforge.plan import plan_cluster
from clusterforge.render.switches.network_os import DRIVERS
from clusterforge.vocab import DeviceKind, GatewayMethod, Nos, Plane

ROOT = Path(__file__).resolve().parents[2]
SWITCHES = ROOT / "src" / "clusterforge" / "render" / "switches"
SHARED_TEMPLATES = {"frr"}  # FRR's frr.conf: SONiC's bgp container renders it (and the lab's FRR switches)


def test_every_nos_has_traits_and_a_driver_carrying_them() -> None:
    assert list(NOS_TRAITS) == list(Nos.values())
    assert all(DRIVERS[nos].traits is traits and traits.nos == nos for nos, traits in NOS_TRAITS.items())
    assert {traits.label for traits in NOS_TRAITS.values()} == {label for _, label in Nos.CHOICES}


def test_the_driver_table_lists_every_nos_folder_and_its_templates() -> None:
    folders = {p.parent.name.removeprefix("_") for p in SWITCHES.glob("_*/driver.py")}
    assert folders == set(DRIVERS)
    templates = {p.name for p in (ROOT / "templates" / "switch").iterdir() if p.is_dir()}
    assert templates - SHARED_TEMPLATES <= set(DRIVERS), "a template folder no NOS driver owns"


def _throwaway(base: NosTraits) -> NosTraits:
    """Another NOS in Cumulus's place: its own port spelling, no VRRP, no fixed anycast MAC."""
    return replace(base, label="ThrowawayOS", port_name=lambda index, lanes: f"xp{index}-{lanes}", vrrp=False,
                   anycast_mac=None)


def test_the_planners_take_every_nos_fact_from_the_traits_they_are_given() -> None:
    spec, _ = load_cluster(ROOT / "inventory" / "roce-128gpu.yaml")
    cumulus = {name for name in Plane.values() if spec.networks.plane(name).nos == Nos.CUMULUS}
    assert cumulus == {Plane.STORAGE, Plane.MANAGEMENT, Plane.OOB}
    usual = plan_cluster(spec)
    table = MappingProxyType({**NOS_TRAITS, Nos.CUMULUS: _throwaway(NOS_TRAITS[Nos.CUMULUS])})
    other = plan_cluster(spec, table)
    # ports on the NOS's planes are spelt its way; the SONiC data plane is untouched
    spelt = {link.a.port for link in other.links if link.plane in cumulus
             and other.device(link.a.device).kind in DeviceKind.SWITCHES}
    assert spelt and all(re.fullmatch(r"xp\d+-\d+", port) for port in spelt)
    assert [link for link in other.links if link.plane == Plane.DATA] == \
        [link for link in usual.links if link.plane == Plane.DATA]
    # without VRRP the management gateway sits on one switch, and the warning names the NOS
    assert usual.gateways[Plane.MANAGEMENT].method == GatewayMethod.VRRP
    assert other.gateways[Plane.MANAGEMENT].method == GatewayMethod.SINGLE
    assert any("ThrowawayOS has no VRRP model" in w for w in other.warnings)
    # no fixed anycast MAC: the storage gateway gets the per-VLAN locally administered one
    assert usual.gateways[Plane.STORAGE].virtual_mac == "00:00:5e:00:01:01"
    assert other.gateways[Plane.STORAGE].virtual_mac == "02:cf:00:00:00:14"
