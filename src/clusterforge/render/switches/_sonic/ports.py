"""PORT: every cabled or addressed front-panel port, up, at the Plan's speed and MTU."""

from __future__ import annotations

from typing import Any

from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["PORT"]


def PORT(facts: SwitchFacts, qos: dict[str, Any]) -> dict[str, Any] | None:  # noqa: N802 - table name
    out: dict[str, Any] = {}
    for port in facts.ports:
        entry = {"admin_status": "up", "mtu": str(port.mtu)}
        if port.speed_gbps:
            entry["speed"] = str(port.speed_gbps * 1000)  # SONiC counts Mb/s
        if port.description:
            entry["description"] = port.description
        out[port.name] = entry
    return out or None
