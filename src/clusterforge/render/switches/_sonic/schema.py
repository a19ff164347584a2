"""SONiC's structured config as typed records: one entry type per CONFIG_DB table, one field per table.

An entry is a TypedDict because CONFIG_DB is JSON at the edge: the record is the dict that is dumped,
and mypy checks every field the table builders set against it. Field names and value types follow
sonic-buildimage's YANG models (src/sonic-yang-models/yang-models/sonic-<table>.yang at 086b03bd70);
every value is the string CONFIG_DB stores. `ConfigDb` is frozen, one optional field per table, named
as the table is; `tables()` is what config_db.json holds (tables that are None or empty are left out).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, NotRequired, TypedDict

from clusterforge.render.switches._frr.schema import FrrConfig

__all__ = [
    "DeviceMetadata", "MgmtVrfGlobal", "MgmtPort", "MgmtInterface", "Port", "NoFields", "Vlan", "VlanMember",
    "VlanInterface", "Sag", "QosMap", "BufferPool", "BufferProfile", "ProfileRef", "ProfileList", "PortQosMap",
    "PfcWatchdog", "WredProfile", "Scheduler", "Queue", "ConfigDb", "SonicConfig", "RECORDS",
]


class DeviceMetadata(TypedDict):  # DEVICE_METADATA|localhost (sonic-device_metadata.yang)
    hostname: str
    type: str
    docker_routing_config_mode: str
    buffer_model: str
    platform: NotRequired[str]
    hwsku: NotRequired[str]
    bgp_asn: NotRequired[str]


class MgmtVrfGlobal(TypedDict):  # MGMT_VRF_CONFIG|vrf_global (sonic-mgmt_vrf.yang)
    mgmtVrfEnabled: str  # noqa: N815 - the YANG leaf's name


class MgmtPort(TypedDict):  # MGMT_PORT|eth0 (sonic-mgmt_port.yang)
    admin_status: str
    alias: str
    mtu: str


class MgmtInterface(TypedDict):  # MGMT_INTERFACE|eth0|<cidr> (sonic-mgmt_interface.yang)
    gwaddr: NotRequired[str]


class Port(TypedDict):  # PORT|<name> (sonic-port.yang: lanes and speed mandatory)
    admin_status: str
    alias: str
    index: str
    lanes: str
    mtu: str
    speed: str  # Mb/s
    fec: NotRequired[str]
    description: NotRequired[str]


class NoFields(TypedDict):
    """An entry that is all key: INTERFACE|<port>, INTERFACE|<port>|<cidr>, LOOPBACK_INTERFACE|..., the
    address rows of VLAN_INTERFACE."""


class Vlan(TypedDict):  # VLAN|Vlan<id> (sonic-vlan.yang)
    vlanid: str
    mtu: str


class VlanMember(TypedDict):  # VLAN_MEMBER|Vlan<id>|<port>
    tagging_mode: str


class VlanInterface(TypedDict):  # VLAN_INTERFACE|Vlan<id> (and its address rows)
    static_anycast_gateway: NotRequired[str]


class Sag(TypedDict):  # SAG|GLOBAL (sonic-static-anycast-gateway.yang)
    gateway_mac: str


QosMap = dict[str, str]  # DSCP_TO_TC_MAP, TC_TO_*, MAP_PFC_PRIORITY_TO_QUEUE, CABLE_LENGTH: key -> value


class BufferPool(TypedDict):  # BUFFER_POOL|<name> (sonic-buffer-pool.yang)
    type: str
    mode: str
    size: NotRequired[str]  # dynamic buffer model: only the egress lossless pool has one


class DefaultLosslessBufferParameter(TypedDict):  # DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE
    default_dynamic_th: str


class LosslessTrafficPattern(TypedDict):  # LOSSLESS_TRAFFIC_PATTERN|AZURE (sonic-lossless-traffic-pattern.yang)
    mtu: str
    small_packet_percentage: str


class BufferProfile(TypedDict):  # BUFFER_PROFILE|<name> (sonic-buffer-profile.yang)
    pool: str
    dynamic_th: str
    size: NotRequired[str]
    xon: NotRequired[str]
    xoff: NotRequired[str]


class ProfileRef(TypedDict):  # BUFFER_PG|<port>|<pgs>, BUFFER_QUEUE|<port>|<queues>
    profile: str


class ProfileList(TypedDict):  # BUFFER_PORT_INGRESS/EGRESS_PROFILE_LIST|<port>
    profile_list: str


class PortQosMap(TypedDict, total=False):  # PORT_QOS_MAP|<port> and |global (sonic-port-qos-map.yang)
    dscp_to_tc_map: str
    tc_to_queue_map: str
    tc_to_pg_map: str
    pfc_to_queue_map: str
    pfc_to_pg_map: str
    pfc_enable: str
    pfcwd_sw_enable: str


class PfcWatchdog(TypedDict):  # PFC_WD|<port> (sonic-pfcwd.yang)
    action: str
    detection_time: str
    restoration_time: str


class WredProfile(TypedDict):  # WRED_PROFILE|<name> (sonic-wred-profile.yang)
    ecn: str
    wred_green_enable: str
    green_min_threshold: str
    green_max_threshold: str
    green_drop_probability: str
    wred_yellow_enable: str
    yellow_min_threshold: str
    yellow_max_threshold: str
    yellow_drop_probability: str
    wred_red_enable: str
    red_min_threshold: str
    red_max_threshold: str
    red_drop_probability: str


class Scheduler(TypedDict):  # SCHEDULER|<name> (sonic-scheduler.yang)
    type: str
    weight: NotRequired[str]


class Queue(TypedDict):  # QUEUE|<port>|<queue> (sonic-queue.yang)
    scheduler: str
    wred_profile: NotRequired[str]


@dataclass(frozen=True, slots=True)
class ConfigDb:
    """config_db.json: one field per CONFIG_DB table clusterforge writes (None: the table does not apply)."""

    DEVICE_METADATA: dict[str, DeviceMetadata]
    MGMT_VRF_CONFIG: dict[str, MgmtVrfGlobal] | None = None
    MGMT_PORT: dict[str, MgmtPort] | None = None
    MGMT_INTERFACE: dict[str, MgmtInterface] | None = None
    PORT: dict[str, Port] | None = None
    LOOPBACK_INTERFACE: dict[str, NoFields] | None = None
    INTERFACE: dict[str, NoFields] | None = None
    VLAN: dict[str, Vlan] | None = None
    VLAN_MEMBER: dict[str, VlanMember] | None = None
    VLAN_INTERFACE: dict[str, VlanInterface] | None = None
    SAG: dict[str, Sag] | None = None
    DSCP_TO_TC_MAP: dict[str, QosMap] | None = None
    TC_TO_QUEUE_MAP: dict[str, QosMap] | None = None
    TC_TO_PRIORITY_GROUP_MAP: dict[str, QosMap] | None = None
    MAP_PFC_PRIORITY_TO_QUEUE: dict[str, QosMap] | None = None
    PFC_PRIORITY_TO_PRIORITY_GROUP_MAP: dict[str, QosMap] | None = None
    CABLE_LENGTH: dict[str, QosMap] | None = None
    BUFFER_POOL: dict[str, BufferPool] | None = None
    BUFFER_PROFILE: dict[str, BufferProfile] | None = None
    BUFFER_PG: dict[str, ProfileRef] | None = None
    BUFFER_QUEUE: dict[str, ProfileRef] | None = None
    BUFFER_PORT_INGRESS_PROFILE_LIST: dict[str, ProfileList] | None = None
    BUFFER_PORT_EGRESS_PROFILE_LIST: dict[str, ProfileList] | None = None
    DEFAULT_LOSSLESS_BUFFER_PARAMETER: dict[str, DefaultLosslessBufferParameter] | None = None
    LOSSLESS_TRAFFIC_PATTERN: dict[str, LosslessTrafficPattern] | None = None
    PORT_QOS_MAP: dict[str, PortQosMap] | None = None
    PFC_WD: dict[str, PfcWatchdog] | None = None
    WRED_PROFILE: dict[str, WredProfile] | None = None
    SCHEDULER: dict[str, Scheduler] | None = None
    QUEUE: dict[str, Queue] | None = None

    def tables(self) -> dict[str, Any]:
        """{table: entries} of the tables that apply: what config_db.json holds."""
        return {f.name: value for f in fields(self) if (value := getattr(self, f.name))}


@dataclass(frozen=True, slots=True)
class SonicConfig:
    """A SONiC switch's structured config: its CONFIG_DB tables and FRR (split-unified: one frr.conf)."""

    config_db: ConfigDb
    frr: FrrConfig


# every typed record of this module (tests count and check them)
RECORDS = (DeviceMetadata, MgmtVrfGlobal, MgmtPort, MgmtInterface, Port, NoFields, Vlan, VlanMember, VlanInterface,
           Sag, BufferPool, DefaultLosslessBufferParameter, LosslessTrafficPattern, BufferProfile, ProfileRef,
           ProfileList, PortQosMap, PfcWatchdog, WredProfile, Scheduler,
           Queue, ConfigDb, SonicConfig)
