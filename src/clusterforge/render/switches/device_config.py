"""Structured config -> file contents. Formatting only: every value is already decided.

Each NOS's writer is its driver's (network_os.DRIVERS, `_<nos>/driver.py`)."""

from __future__ import annotations

from typing import Any

from clusterforge.render.jsontext import to_json
from clusterforge.render.switches.header import HEADER_TEXT
from clusterforge.render.switches.network_os import driver_for
from clusterforge.render.switches.structured_config import StructuredConfig
from clusterforge.render.switches.templates import render_template

__all__ = ["device_files", "fabric_files", "HEADER_TEXT", "to_json"]


def device_files(nos: str, structured: StructuredConfig) -> dict[str, str]:
    """File name -> content for one switch."""
    return driver_for(nos).write(structured)


def fabric_files(partitions: dict[str, Any] | None, opensm: dict[str, Any] | None = None) -> dict[str, str]:
    files = {}
    if partitions is not None:
        files["opensm-partitions.conf"] = render_template("switch/infiniband/opensm-partitions.conf.j2", **partitions)
    if opensm is not None:
        files["opensm.conf"] = render_template("switch/infiniband/opensm.conf.j2", **opensm)
    return files
