"""PORT: every cabled or addressed front-panel port, up, at the Plan's speed and MTU.

FEC: needs_rs_fec. Lanes, alias and index come from the switch model's SONiC port map (catalog `sonic:`, read from
the platform's port_config.ini): sonic-port.yang makes `lanes` and `speed` mandatory, and a PORT
entry whose lanes differ from the platform's would be a different port to orchagent.
"""

from __future__ import annotations

from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches._sonic.schema import Port
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["PORT", "needs_rs_fec"]


def needs_rs_fec(speed_gbps: int, lanes: int) -> bool:
    """RS-FEC on the port: SONiC's common FEC rule (sonic-net/SONiC determine-FEC design, table 2: lanes of 25G
    or 50G, 1 to 16 of them, take `rs`; 10G and 20G lanes none) and IEEE 802.3 clause 119 (200GBASE-R and
    400GBASE-R always carry RS(544,514), whatever the host-side lanes: a 200G port on 8 x 25G lanes too), and
    sonic-config-engine minigraph.py's `rs` on every 100G port."""
    return speed_gbps >= 200 or speed_gbps == 100 or speed_gbps * 1000 // lanes >= 25_000


def PORT(facts: SwitchFacts, qos: SwitchQos) -> dict[str, Port] | None:  # noqa: N802 - table name
    platform = facts.sonic_platform
    if platform is None:
        raise ValueError(f"{facts.name}: switch model {facts.device.model!r} has no SONiC port map in the catalog")
    out: dict[str, Port] = {}
    for port in facts.ports:
        known = platform.by_name.get(port.name)
        if known is None:
            raise ValueError(f"{facts.name}: {port.name} is not a port of {platform.hwsku}")
        speed = port.speed_gbps or known.speed_gbps
        if speed not in known.speeds_gbps:  # refused at load time already (plan/sonic_checks.py)
            raise ValueError(f"{facts.name}: {port.name} at {speed}G is not a speed {platform.hwsku} allows there")
        entry: Port = {"admin_status": "up", "alias": known.alias, "index": str(known.index), "lanes": known.lanes,
                 "mtu": str(port.mtu), "speed": str(speed * 1000)}  # SONiC counts Mb/s
        if needs_rs_fec(speed, len(known.lanes.split(","))):
            entry["fec"] = "rs"
        if port.description:
            entry["description"] = port.description
        out[port.name] = entry
    return out or None
