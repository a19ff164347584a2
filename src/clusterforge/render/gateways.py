"""gateways.csv: per plane, every gateway hosts are given and who answers it.

One row per (plane, gateway): the method (plan/gateways.py), and either the switches that carry
it (and, for VRRP, the master) or, for a plane declared external, who must provide it. The
report's IP-plan page shows the same rows (render/report/ipplan.py).
"""

from __future__ import annotations

import csv
import io
from typing import Any

from clusterforge.plan import Plan
from clusterforge.render.csvcell import row
from clusterforge.vocab import GatewayMethod

__all__ = ["render_gateways", "gateway_rows", "GATEWAY_COLUMNS", "GATEWAYS_FILE"]

GATEWAYS_FILE = "gateways.csv"
GATEWAY_COLUMNS = ["plane", "gateway", "method", "provided_by", "switches", "must_be_provided_externally"]


def gateway_rows(plan: Plan) -> list[dict[str, Any]]:
    out = []
    for plane, record in plan.gateways.items():
        hops: dict[str, list[str]] = {}
        for hop in record.first_hops:
            hops.setdefault(hop.vip.split("/")[0], []).append(hop.switch)
        external = record.method == GatewayMethod.EXTERNAL
        for gateway in record.gateways:
            switches = hops.get(gateway, [])
            out.append({"plane": plane, "gateway": gateway, "method": record.method,
                        "provided_by": record.provider if external else ("fabric" if switches else "nobody"),
                        "switches": switches, "external": external})
    return out


def render_gateways(plan: Plan) -> dict[str, str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(GATEWAY_COLUMNS)
    for r in gateway_rows(plan):
        writer.writerow(row([r["plane"], r["gateway"], r["method"], r["provided_by"], " ".join(r["switches"]),
                             "yes" if r["external"] else "no"]))
    return {GATEWAYS_FILE: buffer.getvalue()}
