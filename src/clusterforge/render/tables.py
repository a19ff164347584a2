"""Rich tables for `clusterforge plan`."""

from __future__ import annotations

from rich.table import Table

from clusterforge.plan import Plan
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["plan_tables"]


def plan_tables(plan: Plan, device_limit: int = 200) -> list[Table]:
    summary = Table(title=f"{plan.cluster} @ {plan.site}")
    for key in ("gpus", "servers", "switches", "racks", "pdus", "links", "power_kw"):
        summary.add_column(key, justify="right")
    summary.add_row(*(str(getattr(plan.summary, k)) for k in ("gpus", "servers", "switches", "racks", "pdus", "links",
                                                     "power_kw")))
    racks = Table(title="Racks")
    for col in ("rack", "role", "power W", "budget W", "capacity W", "cooling", "weight kg", "U used", "phase imb %"):
        racks.add_column(col, justify="right" if col not in ("rack", "role", "cooling") else "left")
    for rack in plan.racks:
        racks.add_row(rack.name, rack.role, f"{rack.power_w:,.0f}", f"{rack.budget_w:,.0f}",
                      f"{rack.capacity_w:,.0f}", rack.cooling, f"{rack.weight_kg:,.0f}",
                      f"{rack.used_u}/{rack.rack_u}", f"{rack.phase_imbalance_pct:.0f}")
    fabric = Table(title="Fabrics")
    for col in ("plane", "transport", "NOS", "tiers", "leaves", "spines", "cores", "oversubscription", "links"):
        fabric.add_column(col)
    for name, f in plan.fabric.items():
        ratio = ", ".join(f"{tier} {value:g}:1" for tier, value in f.oversubscription.items())
        fabric.add_row(name, f.transport, f.nos, str(f.tiers), str(f.leaves), str(f.spines), str(f.cores),
                       ratio, str(f.links))
    devices = Table(title=f"Devices (first {device_limit})" if len(plan.devices) > device_limit else "Devices")
    for col in ("name", "kind", "model", "rack", "U", "management / oob", "data"):
        devices.add_column(col)
    for device in plan.devices[:device_limit]:
        mgmt = next((i.ip for i in device.interfaces if i.plane in (Plane.MANAGEMENT, Plane.OOB) and i.ip), "")
        data = [i.ip for i in device.interfaces if i.plane == Plane.DATA and i.ip and device.kind == DeviceKind.SERVER]
        devices.add_row(device.name, device.kind, device.model, device.rack or "", str(device.ru or ""), mgmt or "",
                        f"{data[0]} (+{len(data) - 1})" if data else "")
    bom = Table(title="Bill of materials")
    for col in ("kind", "item", "count", "unit", "total"):
        bom.add_column(col, justify="right" if col in ("count", "unit", "total") else "left")
    for line in plan.bom.lines:
        bom.add_row(line.kind, line.item, str(line.count), f"{line.unit_price:,.0f}",
                    f"{line.total:,.0f}")
    bom.add_row("", "hardware total", "", "", f"{plan.bom.hardware_total:,.0f}")
    tables = [summary, racks, fabric, devices, bom, monitoring_table(plan)]
    return tables + ([kubernetes_api_table(plan)] if plan.kubernetes is not None else [])


def kubernetes_api_table(plan: Plan) -> Table:
    """The control plane's members and the one address its clients name (plan/control_plane.py)."""
    assert plan.kubernetes is not None
    control_plane = plan.kubernetes.control_plane
    table = Table(title="Kubernetes API")
    if control_plane is None:
        table.add_column("not planned")
        table.add_row("no control node to run the control plane on (control.nodes is 0)")
        return table
    for col in ("clients name", "behind it", "etcd members", "highly available"):
        table.add_column(col)
    members = ", ".join(f"{name} {ip}" for name, ip in control_plane.members)
    if control_plane.ha:
        behind = (f"virtual address (keepalived, VRRP id {control_plane.to_dict()['vrrp_id']}); HAProxy on each"
                  f" control node to the API servers' :{control_plane.to_dict()['api_port']}")
        ha = f"yes: {len(control_plane.members)} members, quorum {len(control_plane.members) // 2 + 1}"
    else:
        behind, ha = f"the API server of {control_plane.members[0][0]}", "no (one control node; three make it so)"
    table.add_row(control_plane.server, behind, members, ha)
    return table


def monitoring_table(plan: Plan) -> Table:
    """Where Prometheus runs, what it scrapes, and the disk its retention needs (plan/monitoring.py)."""
    monitoring = plan.monitoring
    table = Table(title="Monitoring")
    if monitoring is None:
        table.add_column("not planned")
        table.add_row("no control node to run Prometheus and Alertmanager on (control.nodes is 0)")
        return table
    for col in ("host", "listens on", "targets", "series (est.)", "samples/s", "retention", "retention size",
                "disk"):
        table.add_column(col, justify="left" if col in ("host", "listens on", "targets") else "right")
    counts = monitoring.to_dict()["targets"]
    assert isinstance(counts, dict)
    table.add_row(monitoring.host, f"{monitoring.address}:{monitoring.prometheus_port},{monitoring.alertmanager_port}",
                  ", ".join(f"{job} {count}" for job, count in counts.items()), f"{monitoring.series:,}",
                  f"{monitoring.samples_per_s:,.0f}", f"{monitoring.retention_days} d",
                  f"{monitoring.retention_bytes / 2**30:,.1f} GiB", f"{monitoring.disk_gib:,} GiB")
    return table
