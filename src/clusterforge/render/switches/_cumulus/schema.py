"""Cumulus Linux's structured config as typed records: one frozen record per `set` section of startup.yaml.

Section and field names follow NVUE's object model (schemas/nvue_object_model.json, NVIDIA's NVUE command
reference); startup_yaml.py formats exactly these fields, a `set` section per field of CumulusConfig
in its order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from clusterforge.plan.slotinit import slot_init
from clusterforge.render.switches._frr.router_bgp import RouterBgp

__all__ = ["NvueSystem", "NvueVrrpGroup", "NvueInterface", "NvueBridge", "NvuePfcWatchdog", "NvueEcn", "NvueEts",
           "NvueQos", "NvueRouter", "NvueWords", "CumulusConfig", "RECORDS"]


@dataclass(frozen=True, slots=True)
class NvueSystem:  # system
    hostname: str


@dataclass(frozen=True, slots=True)
class NvueVrrpGroup:  # interface <svi> ip vrrp virtual-router <id>
    id: int
    priority: int | None
    addresses: tuple[str, ...]


@slot_init  # one per port (or session) of every switch: plan/slotinit.py
@dataclass(frozen=True, slots=True)
class NvueInterface:  # interface <id>: every field present, so the writer never guesses what is absent
    name: str  # lo, eth0, swpN, vlanN
    type: str  # loopback, eth, swp, svi
    description: str = ""
    addresses: tuple[str, ...] = ()
    vrf: str | None = None
    gateway: str | None = None
    vrr: tuple[str, ...] = ()  # anycast gateway addresses (VRR)
    vrrp: tuple[NvueVrrpGroup, ...] = ()
    mtu: int | None = None
    speed: str | None = None  # "400G"
    access_vlan: int | None = None
    trunk: bool = False
    vlan: int | None = None  # SVIs: their VLAN
    pfc_watchdog: bool = False


@dataclass(frozen=True, slots=True)
class NvueBridge:  # bridge domain <domain>
    domain: str
    vlans: tuple[int, ...]
    stp_priority: int | None = None


@dataclass(frozen=True, slots=True)
class NvuePfcWatchdog:  # qos pfc-watchdog
    polling_interval_ms: int
    robustness: int


@dataclass(frozen=True, slots=True)
class NvueEcn:  # qos congestion-control default-global traffic-class <tc>
    traffic_class: int
    enabled: bool
    min_bytes: int | None = None  # the marked class only
    max_bytes: int | None = None
    probability_pct: int | None = None


@dataclass(frozen=True, slots=True)
class NvueEts:  # qos egress-scheduler default-global traffic-class <tc>
    traffic_class: int
    mode: str  # strict, dwrr
    bw_percent: int | None = None  # dwrr only


@dataclass(frozen=True, slots=True)
class NvueQos:  # qos: roce, mapping, egress-queue-mapping, pfc, pfc-watchdog, congestion-control, egress-scheduler
    roce_mode: str
    trust: str
    dscp_to_priority: Mapping[int, int]
    priority_to_traffic_class: Mapping[int, int]  # every switch priority 0-7 (egress-queue-mapping)
    pfc_priorities: tuple[int, ...]
    pfc_cable_length_m: int
    pfc_watchdog: NvuePfcWatchdog
    ecn: tuple[NvueEcn, ...]  # every traffic class 0-7: marked or explicitly not
    ets: tuple[NvueEts, ...]


@dataclass(frozen=True, slots=True)
class NvueRouter:  # router bgp
    asn: int
    router_id: str


@dataclass(frozen=True, slots=True)
class NvueWords:
    """The spelling of the plane's NVUE release (nvue_syntax.py), not a `set` section."""

    version: str
    ip: str
    switch: str
    on: str
    vrr_state: str
    vrf_at_interface: bool
    comment: str  # the header comment naming the syntax


@dataclass(frozen=True, slots=True)
class CumulusConfig:
    """startup.yaml's `set` sections in their order (None or empty: the section does not apply), and the spelling."""

    system: NvueSystem
    interface: tuple[NvueInterface, ...]
    bridge: NvueBridge | None  # storage leaves and access planes only
    qos: NvueQos | None  # RoCE planes only
    router: NvueRouter | None
    vrf: Mapping[str, RouterBgp] | None  # BGP sessions and originated prefixes, in VRF default
    nvue: NvueWords


RECORDS = (NvueSystem, NvueVrrpGroup, NvueInterface, NvueBridge, NvuePfcWatchdog, NvueEcn, NvueEts, NvueQos,
           NvueRouter, NvueWords, CumulusConfig)
