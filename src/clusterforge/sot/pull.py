"""As-built facts from the source of truth back into the asset register.

``sot pull`` reads, for every planned device and PDU, what the data-centre team recorded in
Nautobot (serial number, asset tag, status) and writes the asset register with those columns
added: ``assets-asbuilt.csv``. A planned device the server does not know is reported as ``absent``.
"""

from __future__ import annotations

import csv
import io

from clusterforge.model import ClusterSpec
from clusterforge.plan import Plan
from clusterforge.render.assets import render_assets
from clusterforge.render.csvcell import cell
from clusterforge.sot.client import NautobotClient
from clusterforge.sot.desired import cluster_tag

__all__ = ["AS_BUILT_COLUMNS", "as_built", "as_built_register"]

AS_BUILT_COLUMNS = ["serial", "asset_tag", "status"]


def as_built(client: NautobotClient, plan: Plan) -> dict[str, dict[str, str]]:
    """Device name -> {serial, asset_tag, status} as the server has them (the cluster's tagged devices)."""
    found = {}
    for device in client.list("dcim/devices/", tags=cluster_tag(plan), depth=1):
        status = device.get("status") or {}
        found[device["name"]] = {
            "serial": device.get("serial") or "",
            "asset_tag": device.get("asset_tag") or "",
            "status": (status.get("name") or status.get("display") or "") if isinstance(status, dict) else str(status),
        }
    return found


def as_built_register(spec: ClusterSpec, plan: Plan, facts: dict[str, dict[str, str]]) -> str:
    """The asset register (render/assets.py) with serial, asset tag and status per row."""
    planned = csv.reader(io.StringIO(render_assets(plan)["assets.csv"]))
    header = next(planned)
    name_at = header.index("name")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header + AS_BUILT_COLUMNS)
    for row in planned:
        fact = facts.get(row[name_at])
        extra = [fact[c] for c in AS_BUILT_COLUMNS] if fact else ["", "", "absent"]
        writer.writerow(row + [cell(v) for v in extra])  # what a technician typed never runs as a formula
    return buffer.getvalue()
