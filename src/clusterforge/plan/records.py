"""The Plan's facts beyond devices and links: frozen, typed records every renderer reads.

Each record decides what renderers used to decide from the declaration (a plane's transport, NOS,
VLAN, MTU, VRF and whether it is lossless; a server model's GPU; the management VRF). Renderers
take the Plan only. ``to_dict()`` gives the JSON the Plan has always had (``clusterforge plan
--format json``); field names are the keys, in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clusterforge.model.site import Costs, Facility
from clusterforge.vocab import Transport

__all__ = [
    "PlaneAttrs", "ServerFacts", "SiteFacts", "SwitchQos", "HostRoce", "StorageMount", "StorageService", "TeamQuota",
    "Services", "Summary", "BomLine", "Bom", "DEFAULT_MGMT_VRF",
]  # fmt: skip

# SONiC only knows a management VRF named "mgmt"; a declaration that names none gets it everywhere.
DEFAULT_MGMT_VRF = "mgmt"


@dataclass(frozen=True, slots=True)
class PlaneAttrs:
    """One plane as the renderers see it."""

    name: str
    transport: str  # vocab.Transport
    nos: str  # vocab.Nos
    vlan: int
    mtu: int
    vrf: str | None  # as declared
    lossless: bool  # RoCE: PFC + ECN on the RoCE priority
    nvue_syntax: str = "5.15"  # Cumulus planes: the NVUE release whose syntax startup.yaml is written in

    @classmethod
    def of(cls, name: str, transport: str, nos: str, vlan: int, mtu: int, vrf: str | None,
           nvue_syntax: str = "5.15") -> PlaneAttrs:
        return cls(name, transport, nos, vlan, mtu, vrf, transport == Transport.ROCE, nvue_syntax)


@dataclass(frozen=True, slots=True)
class ServerFacts:
    """What a server model brings that the hosts are checked against."""

    model: str
    gpu_model: str
    gpu_count: int
    nvswitch: bool


@dataclass(frozen=True, slots=True)
class SiteFacts:
    name: str
    owner: str
    facility: Facility
    costs: Costs
    time_servers: tuple[str, ...] = ()  # site.time_servers: every host's NTP servers


@dataclass(frozen=True, slots=True)
class SwitchQos:
    """The one lossless-RoCE intent, rendered per NOS."""

    roce_dscp: int
    roce_priority: int
    cnp_dscp: int
    cnp_priority: int
    ecn_min_bytes: int
    ecn_max_bytes: int
    ecn_probability_pct: int
    pfc_watchdog_ms: int
    ets_roce_pct: int
    pfc_cable_length_m: int
    dscp_policy: str = "precedence"
    dscp_to_tc: tuple[int, ...] = ()  # index = DSCP 0-63 (plan.qos.dscp_map)
    queue_schedule: tuple[tuple[int, str, int], ...] = ()  # (queue, "dwrr"/"strict", weight %) for 0-7

    def to_dict(self) -> dict[str, Any]:  # the declared intent; the two tables follow from it (plan.qos)
        return {name: getattr(self, name) for name in self.__slots__ if name not in ("dscp_to_tc", "queue_schedule")}


@dataclass(frozen=True, slots=True)
class HostRoce:
    """Host NIC intent: the ToS byte is DSCP << 2 with ECT(0) set, e.g. 26 -> 106."""

    enabled: bool
    trust: str
    pfc_priority: int
    roce_dscp: int
    roce_tos: int
    cnp_dscp: int
    ecn: bool
    mtu: int

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class StorageMount:
    tier: str
    source: str | None
    path: str
    export: str | None
    options: str
    training_data: bool
    server: str | None
    throughput_mbps: float | None = None  # declared client throughput (the fio check compares)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class StorageService:
    kind: str
    mounts: tuple[StorageMount, ...]
    local_nvme_cache: bool
    volumes: tuple[dict[str, Any], ...] = ()  # GlusterFS volume layouts as plan.volumes builds them
    clients: tuple[str, ...] = ()  # storage-plane addresses the volumes allow (auth.allow)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "mounts": [m.to_dict() for m in self.mounts],
                "local_nvme_cache": self.local_nvme_cache, "volumes": list(self.volumes),
                "clients": list(self.clients)}


@dataclass(frozen=True, slots=True)
class TeamQuota:
    name: str
    gpus: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "gpus": self.gpus}


@dataclass(frozen=True, slots=True)
class Services:
    """What the hosts consume: storage mounts, pinned software, team GPU quotas."""

    storage: StorageService
    software: dict[str, Any]  # the declaration's pins, as declared (rendered into host_vars verbatim)
    teams: tuple[TeamQuota, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"storage": self.storage.to_dict(), "software": self.software,
                "teams": [t.to_dict() for t in self.teams]}


@dataclass(frozen=True, slots=True)
class Summary:
    gpus: int
    servers: int
    storage_servers: int
    switches: int
    racks: int
    pdus: int
    links: int
    power_kw: float
    scalable_units: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in self.__slots__}
        out["scalable_units"] = list(self.scalable_units)
        return out


@dataclass(frozen=True, slots=True)
class BomLine:
    kind: str  # server | switch | pdu | cable | optic
    item: str
    count: int
    unit_price: float
    total: float

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class Bom:
    lines: tuple[BomLine, ...]
    totals: dict[str, float]  # per kind
    hardware_total: float
    unpriced: tuple[str, ...]
    switches: int
    cables: dict[str, int]  # per cable class
    optics: int
    pdus: int

    def to_dict(self) -> dict[str, Any]:
        return {"lines": [line.to_dict() for line in self.lines], "totals": dict(self.totals),
                "hardware_total": self.hardware_total, "unpriced": list(self.unpriced), "switches": self.switches,
                "cables": dict(self.cables), "optics": self.optics, "pdus": self.pdus}
