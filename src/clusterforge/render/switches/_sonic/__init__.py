"""SONiC structured config: config_db.json tables (one function per table) plus FRR for BGP.

The tables are the structured config, a typed `SonicConfig` (schema.py: one field per CONFIG_DB table,
one TypedDict per table's entries): config_db.json is their sorted-key JSON dump, which is also how
`sonic-cfggen --print-data` writes it. DEVICE_METADATA sets
docker_routing_config_mode=split-unified so the rendered frr.conf (one file for every
daemon), not bgpcfgd, owns routing.
"""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._frr import frr_structured_config
from clusterforge.render.switches._sonic.buffers import (
    BUFFER_PG,
    BUFFER_POOL,
    BUFFER_PORT_EGRESS_PROFILE_LIST,
    BUFFER_PORT_INGRESS_PROFILE_LIST,
    BUFFER_PROFILE,
    BUFFER_QUEUE,
    DEFAULT_LOSSLESS_BUFFER_PARAMETER,
    LOSSLESS_TRAFFIC_PATTERN,
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
from clusterforge.render.switches._sonic.schema import ConfigDb, SonicConfig
from clusterforge.render.switches._sonic.vlans import VLAN, VLAN_INTERFACE, VLAN_MEMBER
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["sonic_structured_config", "sonic_config_db"]


def sonic_config_db(facts: SwitchFacts, qos: SwitchQos) -> ConfigDb:
    """Every table's builder; order is only for reading (the JSON dump sorts keys). A table that does not
    apply is None."""
    return ConfigDb(
        DEVICE_METADATA=DEVICE_METADATA(facts, qos),
        MGMT_VRF_CONFIG=MGMT_VRF_CONFIG(facts, qos),      # eth0 lives in VRF mgmt, never in the default VRF
        MGMT_PORT=MGMT_PORT(facts, qos),
        MGMT_INTERFACE=MGMT_INTERFACE(facts, qos),
        PORT=PORT(facts, qos),
        LOOPBACK_INTERFACE=LOOPBACK_INTERFACE(facts, qos),
        INTERFACE=INTERFACE(facts, qos),                  # routed /31s (data, storage fabric links)
        VLAN=VLAN(facts, qos),                            # storage SVI and access planes only: data is never bridged
        VLAN_MEMBER=VLAN_MEMBER(facts, qos),
        VLAN_INTERFACE=VLAN_INTERFACE(facts, qos),
        SAG=SAG(facts, qos),                              # the anycast gateway's MAC (storage first hops)
        # lossless RoCE: only on planes whose transport is roce
        DSCP_TO_TC_MAP=DSCP_TO_TC_MAP(facts, qos),        # all 64 DSCPs by the declared policy (AZURE: 26 to TC 1)
        TC_TO_QUEUE_MAP=TC_TO_QUEUE_MAP(facts, qos),
        TC_TO_PRIORITY_GROUP_MAP=TC_TO_PRIORITY_GROUP_MAP(facts, qos),
        MAP_PFC_PRIORITY_TO_QUEUE=MAP_PFC_PRIORITY_TO_QUEUE(facts, qos),  # swss schema.h name
        PFC_PRIORITY_TO_PRIORITY_GROUP_MAP=PFC_PRIORITY_TO_PRIORITY_GROUP_MAP(facts, qos),  # pfc_to_pg_map (Mellanox)
        CABLE_LENGTH=CABLE_LENGTH(facts, qos),            # sizes the lossless PG headroom buffermgrd computes
        BUFFER_POOL=BUFFER_POOL(facts, qos),              # lossless headroom: docs/pfc-headroom.md
        BUFFER_PROFILE=BUFFER_PROFILE(facts, qos),
        BUFFER_PG=BUFFER_PG(facts, qos),                  # the lossless PG "NULL": buffermgrd sizes it
        BUFFER_QUEUE=BUFFER_QUEUE(facts, qos),
        BUFFER_PORT_INGRESS_PROFILE_LIST=BUFFER_PORT_INGRESS_PROFILE_LIST(facts, qos),
        BUFFER_PORT_EGRESS_PROFILE_LIST=BUFFER_PORT_EGRESS_PROFILE_LIST(facts, qos),
        DEFAULT_LOSSLESS_BUFFER_PARAMETER=DEFAULT_LOSSLESS_BUFFER_PARAMETER(facts, qos),  # the PGs' dynamic_th
        LOSSLESS_TRAFFIC_PATTERN=LOSSLESS_TRAFFIC_PATTERN(facts, qos),  # the headroom formula's traffic mix
        PORT_QOS_MAP=PORT_QOS_MAP(facts, qos),            # binds the maps per port, PFC on the RoCE priority only
        PFC_WD=PFC_WD(facts, qos),
        WRED_PROFILE=WRED_PROFILE(facts, qos),            # ECN marking on the RoCE queue, green/yellow/red
        SCHEDULER=SCHEDULER(facts, qos),                  # ETS: RoCE and the lossy queues DWRR, CNP strict
        QUEUE=QUEUE(facts, qos),
    )


def sonic_structured_config(facts: SwitchFacts, qos: SwitchQos) -> SonicConfig:
    return SonicConfig(sonic_config_db(facts, qos), frr_structured_config(facts))
