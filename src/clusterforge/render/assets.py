"""Asset register CSV: asset id, name, model, location (site/rack/U), addresses, owner."""

from __future__ import annotations

import csv
import io

from clusterforge.plan import Plan
from clusterforge.render.csvcell import row
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["render_assets", "ASSET_COLUMNS"]

ASSET_COLUMNS = ["asset_id", "name", "kind", "model", "site", "rack", "u", "height_u", "management_ip",
                 "bmc_ip", "data_ips", "storage_ip", "owner"]


def render_assets(plan: Plan) -> dict[str, str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(ASSET_COLUMNS)
    owner = plan.site_info.owner
    for device in plan.devices:
        by_plane: dict[str, list[str]] = {}
        for iface in device.interfaces:
            if iface.ip and iface.name != "Loopback0":
                by_plane.setdefault(iface.plane, []).append(iface.ip)
        bmc = by_plane.get(Plane.OOB, [""])[0]
        management = by_plane.get(Plane.MANAGEMENT, [""])[0]
        data = " ".join(by_plane.get(Plane.DATA, [])) if device.kind == DeviceKind.SERVER else ""
        storage = by_plane.get(Plane.STORAGE, [""])[0] if device.kind in (DeviceKind.SERVER, DeviceKind.STORAGE) else ""
        writer.writerow(row([device.asset_id, device.name, device.kind, device.model, plan.site, device.rack or "",
                         device.ru or "", device.height_u, management, bmc, data, storage, owner]))
    for pdu in plan.pdus:
        writer.writerow(row([pdu.asset_id, pdu.name, "pdu", pdu.model, plan.site, pdu.rack, "0U", 0, "", pdu.ip or "",
                         "", "", owner]))
    return {"assets.csv": buffer.getvalue()}
