"""Structured config -> file contents. Formatting only: every value is already decided."""

from __future__ import annotations

from typing import Any

from clusterforge.render.jsontext import to_json
from clusterforge.render.switches.templates import environment
from clusterforge.vocab import Nos

__all__ = ["device_files", "fabric_files", "HEADER_TEXT", "to_json"]

HEADER_TEXT = "Rendered by clusterforge from the Plan. Do not edit: change the inventory declaration."


def _template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(header=HEADER_TEXT, **context)


def device_files(nos: str, structured: dict[str, Any]) -> dict[str, str]:
    """File name -> content for one switch."""
    if nos == Nos.SONIC:
        files = {"config_db.json": to_json(structured["config_db"])}
        if "router_bgp" in structured["frr"]:
            files["frr.conf"] = _template("switch/frr/frr.conf.j2", **structured["frr"])
        return files
    if nos == Nos.CUMULUS:
        return {"startup.yaml": _template("switch/cumulus/startup.yaml.j2", config=structured)}
    if nos == Nos.EOS:
        return {"running-config": _template("switch/eos/running-config.j2", config=structured)}
    if nos == Nos.INFINIBAND:
        return {"ib.json": to_json(structured["ib"])}
    raise ValueError(f"no renderer for NOS {nos!r}")


def fabric_files(partitions: dict[str, Any] | None) -> dict[str, str]:
    if partitions is None:
        return {}
    return {"opensm-partitions.conf": _template("switch/infiniband/opensm-partitions.conf.j2", **partitions)}
