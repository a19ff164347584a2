"""The Plan's objects: plain frozen records, JSON-serialisable, built only by planners."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clusterforge.plan.records import (
    DEFAULT_MGMT_VRF,
    Bom,
    HostRoce,
    PlaneAttrs,
    ServerFacts,
    Services,
    SiteFacts,
    Summary,
    SwitchQos,
)
from clusterforge.plan.slotinit import slot_init
from clusterforge.vocab import DeviceKind, Plane

if TYPE_CHECKING:
    from clusterforge.model import SwitchModel
    from clusterforge.plan.baremetal import BmcFacts
    from clusterforge.plan.gateways import PlaneGateway
    from clusterforge.plan.kubernetes import KubernetesPlan
    from clusterforge.plan.liquid import CoolingPlan
    from clusterforge.plan.monitoring import MonitoringPlan
    from clusterforge.plan.queueing import QueueingPlan
    from clusterforge.plan.rackscale import NvlinkDomain, RackTray
    from clusterforge.plan.slurm import SlurmPlan
    from clusterforge.plan.topology import SchedulerTopology

__all__ = ["Interface", "Endpoint", "Device", "Pdu", "Rack", "Link", "FabricSummary", "Plan", "DEVICE_KINDS"]

DEVICE_KINDS = DeviceKind.values()
MANAGEMENT_PRECEDENCE = (Plane.MANAGEMENT, Plane.OOB)  # Device.management_ip


@slot_init  # built by the hundred thousand: see plan/slotinit.py
@dataclass(frozen=True, slots=True)
class Interface:
    name: str
    plane: str
    ip: str | None  # CIDR form
    mtu: int
    vlan: int | None = None
    gateway: str | None = None
    peer_ip: str | None = None
    rail: int | None = None
    members: tuple[str, ...] = ()
    speed_gbps: int | None = None
    # set on ports provisioned for the whole envelope (spine, core, aggregation downlinks): the planned
    # far end, cabled or not yet, so the switch's config never changes when an SU is added
    peer_device: str | None = None
    peer_port: str | None = None
    peer_kind: str | None = None
    peer_asn: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "plane": self.plane, "ip": self.ip, "mtu": self.mtu}
        if self.vlan is not None:
            out["vlan"] = self.vlan
        if self.gateway:
            out["gateway"] = self.gateway
        if self.peer_ip:
            out["peer_ip"] = self.peer_ip
        if self.rail is not None:
            out["rail"] = self.rail
        if self.members:
            out["members"] = list(self.members)
        if self.speed_gbps:
            out["speed_gbps"] = self.speed_gbps
        if self.peer_device:
            out["peer"] = {"device": self.peer_device, "port": self.peer_port, "kind": self.peer_kind}
            if self.peer_asn is not None:
                out["peer"]["asn"] = self.peer_asn
        return out


@slot_init  # built by the hundred thousand: see plan/slotinit.py
@dataclass(frozen=True, slots=True)
class Endpoint:
    device: str
    port: str

    def to_dict(self) -> dict[str, str]:
        return {"device": self.device, "port": self.port}


@slot_init  # built by the hundred thousand: see plan/slotinit.py
@dataclass(frozen=True, slots=True)
class Link:
    a: Endpoint
    b: Endpoint
    plane: str
    speed_gbps: int
    mtu: int
    cable: str
    a_ip: str | None = None
    b_ip: str | None = None
    tier: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "a": self.a.to_dict(), "b": self.b.to_dict(), "plane": self.plane,
            "speed_gbps": self.speed_gbps, "mtu": self.mtu, "cable": self.cable, "tier": self.tier,
        }
        if self.a_ip:
            out["a_ip"], out["b_ip"] = self.a_ip, self.b_ip
        return out


@slot_init  # built by the hundred thousand: see plan/slotinit.py
@dataclass(frozen=True, slots=True)
class Device:
    name: str
    kind: str
    model: str
    su: int | None
    rack: str | None
    ru: int | None
    height_u: int
    power_w: float
    weight_kg: float
    asset_id: str
    interfaces: tuple[Interface, ...] = ()
    psu_feeds: tuple[str, ...] = ()  # one entry per PSU: "A" or "B"
    gpus: int = 0
    plane: str | None = None  # switches: the plane they serve
    asn: int | None = None
    loopback: str | None = None
    rail: int | None = None

    @property
    def management_ip(self) -> str | None:
        """The one rule for where a device is reached (Ansible, SSH, config push), without prefix:
        its management-plane address (a host's OS), else its oob one (a switch's eth0)."""
        for plane in MANAGEMENT_PRECEDENCE:
            for iface in self.interfaces:
                if iface.plane == plane and iface.ip:
                    return iface.ip.split("/")[0]
        return None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name, "kind": self.kind, "model": self.model, "su": self.su, "rack": self.rack,
            "ru": self.ru, "height_u": self.height_u, "power_w": self.power_w, "weight_kg": self.weight_kg,
            "asset_id": self.asset_id, "interfaces": [i.to_dict() for i in self.interfaces],
        }
        if self.psu_feeds:
            out["psu_feeds"] = list(self.psu_feeds)
        if self.gpus:
            out["gpus"] = self.gpus
        for key in ("plane", "asn", "loopback", "rail"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True, slots=True)
class Pdu:
    name: str
    rack: str
    feed: str  # "A" or "B"
    model: str
    capacity_w: float
    outlets: int
    outlets_used: int
    load_w: float  # worst case: the other feed failed, this one carries the rack
    phase_load_w: tuple[float, ...]
    ip: str | None
    asset_id: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "rack": self.rack, "feed": self.feed, "model": self.model,
            "capacity_w": round(self.capacity_w, 1), "outlets": self.outlets, "outlets_used": self.outlets_used,
            "load_w": round(self.load_w, 1), "phase_load_w": [round(p, 1) for p in self.phase_load_w],
            "ip": self.ip, "asset_id": self.asset_id,
        }


@dataclass(frozen=True, slots=True)
class Rack:
    name: str
    su: int | None
    index: int
    role: str  # compute | network | site
    power_w: float
    capacity_w: float
    budget_w: float
    cooling: str  # air | liquid
    weight_kg: float
    floor_load_kg_m2: float
    used_u: int
    rack_u: int
    feeds: tuple[str, ...]
    pdus: tuple[str, ...]
    phase_imbalance_pct: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "su": self.su, "index": self.index, "role": self.role,
            "power_w": round(self.power_w, 1), "capacity_w": round(self.capacity_w, 1),
            "budget_w": round(self.budget_w, 1), "cooling": self.cooling, "weight_kg": round(self.weight_kg, 1),
            "floor_load_kg_m2": round(self.floor_load_kg_m2, 1), "used_u": self.used_u, "rack_u": self.rack_u,
            "feeds": list(self.feeds), "pdus": list(self.pdus),
            "phase_imbalance_pct": round(self.phase_imbalance_pct, 1),
        }


@dataclass(frozen=True, slots=True)
class FabricSummary:
    plane: str
    transport: str
    nos: str
    tiers: int
    leaves: int
    spines: int
    cores: int
    oversubscription: dict[str, float]
    declared_oversubscription: float
    links: int
    notes: tuple[str, ...] = ()
    # rail-group spines (data plane): the spines split into this many groups, group g joined only to the
    # leaves of rails [g x rails_per_group, (g + 1) x rails_per_group); 1 = every spine reaches every leaf
    spine_groups: int = 1
    rails_per_group: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "transport": self.transport, "nos": self.nos, "tiers": self.tiers, "leaves": self.leaves,
            "spines": self.spines, "cores": self.cores, "oversubscription": self.oversubscription,
            "declared_oversubscription": self.declared_oversubscription, "links": self.links,
            "notes": list(self.notes),
        } | ({"spine_groups": self.spine_groups} if self.spine_groups > 1 else {})  # a key only where declared

    def rail_group(self, rail: int | None) -> int:
        """The spine group a rail's leaves uplink to (0 when every spine reaches every leaf)."""
        return rail // self.rails_per_group if rail is not None and self.spine_groups > 1 else 0


@dataclass(frozen=True)
class Plan:
    """Everything a renderer may read. Built only by ``plan_cluster``; renderers take nothing else."""

    cluster: str
    site: str
    devices: tuple[Device, ...]
    racks: tuple[Rack, ...]
    pdus: tuple[Pdu, ...]
    links: tuple[Link, ...]
    fabric: dict[str, FabricSummary]
    pools: dict[str, dict[str, Any]]
    bom: Bom
    qos: SwitchQos
    host_roce: HostRoce
    summary: Summary
    services: Services
    warnings: tuple[str, ...] = ()
    # facts renderers used to read from the declaration (not in to_dict: the JSON contract is unchanged)
    planes: dict[str, PlaneAttrs] = field(default_factory=dict)
    management_vrf: str = DEFAULT_MGMT_VRF
    servers: dict[str, ServerFacts] = field(default_factory=dict)  # by server model
    switch_models: dict[str, SwitchModel] = field(default_factory=dict)  # catalog entries in use, by model
    site_facts: SiteFacts | None = None
    gateways: dict[str, PlaneGateway] = field(default_factory=dict)  # per plane: plan/gateways.py
    rack_trays: tuple[RackTray, ...] = ()  # rack-scale systems' NVLink switch trays and power shelves
    nvlink_domains: tuple[NvlinkDomain, ...] = ()  # one per rack-scale rack
    scheduler: SchedulerTopology | None = None  # Slurm tree/block and Kubernetes node labels (plan/topology.py)
    cooling: CoolingPlan | None = None  # liquid/air split, rows' CDUs (plan/liquid.py), with a liquid loop declared
    schedulers: tuple[str, ...] = ("kubernetes",)  # as declared: kubernetes, slurm or both
    slurm: SlurmPlan | None = None  # with slurm among the schedulers (plan/slurm.py)
    kubernetes: KubernetesPlan | None = None  # with kubernetes among the schedulers (plan/kubernetes.py)
    queueing: QueueingPlan | None = None  # Kueue's flavors, topology and team queues, with Kubernetes and teams
    bmcs: dict[str, BmcFacts] = field(default_factory=dict)  # bare-metal servers' BMCs by server (plan/baremetal.py)
    monitoring: MonitoringPlan | None = None  # with a control node to run it on (plan/monitoring.py)
    state_split: str = "none"  # as declared (state.split): how plan/stacks.py splits the Pulumi state
    _index: dict[str, Device] = field(default_factory=dict, repr=False, compare=False)

    def device(self, name: str) -> Device:
        if not self._index:
            self._index.update((d.name, d) for d in self.devices)
        return self._index[name]

    def plane(self, name: str) -> PlaneAttrs:
        return self.planes[name]

    @property
    def site_info(self) -> SiteFacts:
        """site_facts, which plan_cluster always sets (only a Plan built by hand may lack them)."""
        if self.site_facts is None:
            raise ValueError("this Plan carries no site facts (plan_cluster sets them)")
        return self.site_facts

    def server_facts(self, device: Device) -> ServerFacts:
        return self.servers[device.model]

    def to_dict(self) -> dict[str, Any]:
        return {key: list(value) if isinstance(value, Iterator) else value for key, value in self.json_fields().items()}

    def json_fields(self) -> dict[str, Any]:
        """to_dict's keys and values, the long lists as iterators of one row dict at a time (render/jsonstream)."""
        return {
            "cluster": self.cluster, "site": self.site, "summary": self.summary.to_dict(),
            "devices": (d.to_dict() for d in self.devices), "racks": (r.to_dict() for r in self.racks),
            "pdus": (p.to_dict() for p in self.pdus), "links": (link.to_dict() for link in self.links),
            "fabric": {plane: f.to_dict() for plane, f in self.fabric.items()}, "pools": self.pools,
            "bom": self.bom.to_dict(), "qos": self.qos.to_dict(), "host_roce": self.host_roce.to_dict(),
            "services": self.services.to_dict(),
            "warnings": list(self.warnings),
        } | ({"rack_trays": [t.to_dict() for t in self.rack_trays],
              "nvlink_domains": [d.to_dict() for d in self.nvlink_domains]} if self.nvlink_domains else {}) \
            | ({"cooling": self.cooling.to_dict()} if self.cooling else {}) \
            | ({"kubernetes_api": self.kubernetes.control_plane.to_dict()}
               if self.kubernetes is not None and self.kubernetes.control_plane is not None else {})
