"""InfiniBand planes: no PFC/ECN (the subnet manager owns routing and credit-based flow control).

Per switch, ib.json records what the Plan cabled (ports, peers, speeds) and the management
port; fabric-wide, opensm's partitions.conf declares the default partition and one partition
per InfiniBand plane.
"""

from __future__ import annotations

from typing import Any

from clusterforge.plan import Plan
from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._infiniband.schema import IbConfig, IbSwitch
from clusterforge.render.switches.facts import SwitchFacts
from clusterforge.vocab import Plane, Transport

__all__ = ["ib_structured_config", "opensm_partitions", "opensm_settings", "ib_mtu_code", "DEFAULT_PKEY",
           "OPENSM_PARTITIONS_PATH"]

DEFAULT_PKEY = 0x7FFF  # the IBA default partition key; every port is a member
IPOIB_HEADER_BYTES = 4
# IBA MTU enumeration used by opensm's `mtu=` flag: 1 = 256 B ... 5 = 4096 B
_IB_MTUS = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
OPENSM_PARTITIONS_PATH = "/etc/opensm/partitions.conf"  # where opensm-partitions.conf goes on the SM's host
# Every planned InfiniBand plane is a leaf/spine(/core) fat tree: opensm's fat-tree engine, Up/Down where the
# fat-tree engine refuses the topology (opensm tries them in order; min-hop is its own last resort).
ROUTING_ENGINES = "ftree,updn"
SM_PRIORITY = 15  # the planned SM is the master: the highest priority, over any SM a switch or host starts


def ib_mtu_code(ipoib_mtu: int) -> int:
    """Smallest IB MTU that carries the plane's IPoIB MTU plus the IPoIB header (4096 at most)."""
    for size, code in sorted(_IB_MTUS.items()):
        if ipoib_mtu + IPOIB_HEADER_BYTES <= size:
            return code
    return _IB_MTUS[4096]


def ib_structured_config(facts: SwitchFacts, qos: SwitchQos) -> IbConfig:
    device = facts.device
    out: IbSwitch = {
        "hostname": device.name,
        "model": device.model,
        "role": device.kind,
        "plane": device.plane,
        "su": device.su,
        "rail": device.rail,
        "mtu": facts.plane_mtu,
        "ports": [
            {"port": p.name, "speed_gbps": p.speed_gbps, "peer_device": p.peer_device, "peer_port": p.peer_port,
             "direction": p.direction, "tier": p.tier}
            for p in facts.ports
        ],
    }
    if facts.mgmt is not None:
        out["management"] = {"interface": facts.mgmt.name, "ip": facts.mgmt.ip, "vrf": facts.mgmt_vrf}
    return IbConfig(out)


def opensm_partitions(plan: Plan) -> dict[str, Any] | None:
    """Default partition plus one per InfiniBand plane.

    The Plan carries no PKey, so a plane's partition key is its declared VLAN id: the declaration's
    existing tenant identifier for that plane, unique per plane by the same review.
    """
    planes = [name for name in Plane.FABRICS if plan.plane(name).transport == Transport.INFINIBAND]
    if not planes:
        return None
    partitions = [{"name": "Default", "pkey": f"0x{DEFAULT_PKEY:04x}", "ipoib": True,
                   "mtu_code": min(ib_mtu_code(plan.plane(p).mtu) for p in planes),
                   "members": "ALL=full", "comment": "every port; the subnet manager's own port must be full"}]
    for name in planes:
        plane = plan.plane(name)
        partitions.append({"name": name, "pkey": f"0x{plane.vlan:04x}", "ipoib": True,
                           "mtu_code": ib_mtu_code(plane.mtu), "members": "ALL_CAS=full, ALL_SWITCHES=full, SELF=full",
                           "comment": f"plane {name}: PKey = declared VLAN {plane.vlan}, IPoIB MTU {plane.mtu}"})
    return {"cluster": plan.cluster, "partitions": partitions}


def opensm_settings(plan: Plan) -> dict[str, Any] | None:
    """opensm.conf's planned keys (routing engines, SM priority, the partitions file), or None without InfiniBand."""
    if not any(plan.plane(p).transport == Transport.INFINIBAND for p in Plane.FABRICS):
        return None
    return {"cluster": plan.cluster, "routing_engine": ROUTING_ENGINES, "sm_priority": SM_PRIORITY,
            "partition_config_file": OPENSM_PARTITIONS_PATH}
