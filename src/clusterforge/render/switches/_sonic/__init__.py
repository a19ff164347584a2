"""SONiC structured config: config_db.json tables (one function per table) plus FRR for BGP.

The tables are the structured config: config_db.json is their sorted-key JSON dump, which is
also how `sonic-cfggen --print-data` writes it. DEVICE_METADATA sets
docker_routing_config_mode=split-unified so the rendered frr.conf (one file for every
daemon), not bgpcfgd, owns routing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._frr import frr_structured_config
from clusterforge.render.switches._sonic.buffers import (
    BUFFER_PG,
    BUFFER_POOL,
    BUFFER_PORT_EGRESS_PROFILE_LIST,
    BUFFER_PORT_INGRESS_PROFILE_LIST,
    BUFFER_PROFILE,
    BUFFER_QUEUE,
)
from clusterforge.render.switches._sonic.gateway import SAG
from clusterforge.render.switches._sonic.interfaces import (
    INTERFACE,
    LOOPBACK_INTERFACE,
    MGMT_INTERFACE,
    MGMT_PORT,
    MGMT_VRF_CONFIG,
)
from clusterforge.render.switches._sonic.metadata import DEVICE_METADATA
from clusterforge.render.switches._sonic.ports import PORT
from clusterforge.render.switches._sonic.qos import (
    CABLE_LENGTH,
    DSCP_TO_TC_MAP,
    MAP_PFC_PRIORITY_TO_QUEUE,
    PFC_PRIORITY_TO_PRIORITY_GROUP_MAP,
    PFC_WD,
    PORT_QOS_MAP,
    QUEUE,
    SCHEDULER,
    TC_TO_PRIORITY_GROUP_MAP,
    TC_TO_QUEUE_MAP,
    WRED_PROFILE,
)
from clusterforge.render.switches._sonic.vlans import VLAN, VLAN_INTERFACE, VLAN_MEMBER
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["SONIC_TABLES", "sonic_structured_config"]

Table = Callable[[SwitchFacts, SwitchQos], dict[str, Any] | None]

# Order is only for reading the code: the JSON dump sorts keys. Tables that do not apply return None.
SONIC_TABLES: list[tuple[str, Table]] = [
    ("DEVICE_METADATA", DEVICE_METADATA),
    ("MGMT_VRF_CONFIG", MGMT_VRF_CONFIG),      # eth0 lives in VRF mgmt, never in the default VRF
    ("MGMT_PORT", MGMT_PORT),
    ("MGMT_INTERFACE", MGMT_INTERFACE),
    ("PORT", PORT),
    ("LOOPBACK_INTERFACE", LOOPBACK_INTERFACE),
    ("INTERFACE", INTERFACE),                  # routed /31s (data, storage fabric links)
    ("VLAN", VLAN),                            # storage SVI and access planes only: data is never bridged
    ("VLAN_MEMBER", VLAN_MEMBER),
    ("VLAN_INTERFACE", VLAN_INTERFACE),
    ("SAG", SAG),                              # the anycast gateway's MAC (storage first hops)
    # lossless RoCE: only on planes whose transport is roce
    ("DSCP_TO_TC_MAP", DSCP_TO_TC_MAP),        # all 64 DSCPs by the declared policy (AZURE sends 26 to TC 1)
    ("TC_TO_QUEUE_MAP", TC_TO_QUEUE_MAP),
    ("TC_TO_PRIORITY_GROUP_MAP", TC_TO_PRIORITY_GROUP_MAP),
    ("MAP_PFC_PRIORITY_TO_QUEUE", MAP_PFC_PRIORITY_TO_QUEUE),  # swss schema.h name; sonic-pfc-priority-queue-map
    ("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", PFC_PRIORITY_TO_PRIORITY_GROUP_MAP),  # pfc_to_pg_map (Mellanox)
    ("CABLE_LENGTH", CABLE_LENGTH),            # sizes the lossless PG headroom buffermgrd computes
    ("BUFFER_POOL", BUFFER_POOL),              # lossless headroom: docs/pfc-headroom.md
    ("BUFFER_PROFILE", BUFFER_PROFILE),
    ("BUFFER_PG", BUFFER_PG),
    ("BUFFER_QUEUE", BUFFER_QUEUE),
    ("BUFFER_PORT_INGRESS_PROFILE_LIST", BUFFER_PORT_INGRESS_PROFILE_LIST),
    ("BUFFER_PORT_EGRESS_PROFILE_LIST", BUFFER_PORT_EGRESS_PROFILE_LIST),
    ("PORT_QOS_MAP", PORT_QOS_MAP),            # binds the maps per port, PFC on the RoCE priority only
    ("PFC_WD", PFC_WD),
    ("WRED_PROFILE", WRED_PROFILE),            # ECN marking on the RoCE queue, green/yellow/red
    ("SCHEDULER", SCHEDULER),                  # ETS: RoCE and the lossy queues DWRR, CNP strict
    ("QUEUE", QUEUE),
]


def sonic_structured_config(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Any]:
    config_db = {key: value for key, build in SONIC_TABLES if (value := build(facts, qos))}
    return {"config_db": config_db, "frr": frr_structured_config(facts)}
