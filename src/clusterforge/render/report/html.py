"""render_report: the Plan as files people look at — one self-contained HTML page, SVGs and a BOM CSV.

report/index.html            inline CSS and SVG, no scripts, no external URLs: opens from a file or an
                             artifact store, offline, and prints
report/racks/<rack>.svg      one elevation per rack
report/fabric-<plane>.svg    one aggregated diagram per plane
report/bom.csv               bill of materials lines

Output is a pure function of the Plan: no timestamps, so reports diff cleanly between commits.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from clusterforge import paths
from clusterforge.plan.objects import Device, Plan
from clusterforge.render.report.bom import bom_csv, bom_view
from clusterforge.render.report.elevation import rack_layout_key, rack_view
from clusterforge.render.report.fabric_svg import FABRIC_TEMPLATE, fabric_view
from clusterforge.render.report.ipplan import ip_plan_view
from clusterforge.render.report.power import power_view
from clusterforge.render.report.qos import qos_view
from clusterforge.render.report.rack_svg import rack_svg
from clusterforge.render.report.storage import storage_view
from clusterforge.render.report.tco import tco
from clusterforge.render.report.theme import (
    FEED_COLOURS,
    FONT,
    KIND_COLOURS,
    KIND_LABELS,
    STATUS_COLOURS,
    fmt_int,
    fmt_kw,
    fmt_money,
    fmt_pct,
)

__all__ = ["render_report", "report_environment"]

PREFIX = "report"
# above this many racks, identical racks are shown once with the list of racks sharing the layout
RACKS_SHOWN_INDIVIDUALLY = 16
# the order of the page; each key is rendered by templates/report/<key>.html.j2
SECTIONS = ("overview", "racks", "fabric", "power", "ipplan", "storage", "bom", "tco")
SECTION_TITLES = {"overview": "Overview", "racks": "Rack elevations", "fabric": "Fabrics",
                  "power": "Power & cooling", "ipplan": "IP plan", "storage": "Storage", "bom": "Bill of materials",
                  "tco": "TCO"}


def report_environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(paths.templates_dir() / "report")), autoescape=True, trim_blocks=True,
                      lstrip_blocks=True, undefined=StrictUndefined, keep_trailing_newline=True)
    env.filters.update(kw=fmt_kw, money=fmt_money, pct=fmt_pct, int=fmt_int)
    env.globals.update(font=FONT, status_colours=STATUS_COLOURS, feed_colours=FEED_COLOURS)
    return env


def _rack_list(names: list[str], shown: int = 6) -> str:
    if len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:3])}, …, {', '.join(names[-2:])}"


def _rack_sections(plan: Plan) -> tuple[dict[str, str], list[dict]]:
    """Every rack's SVG file, and the page's rack groups (site racks, then each SU)."""
    by_rack: dict[str, list[Device]] = defaultdict(list)
    for device in plan.devices:
        if device.rack:
            by_rack[device.rack].append(device)
    for tray in plan.rack_trays:  # rack-scale systems: NVLink switch trays and power shelves, drawn in place
        by_rack[tray.rack].append(Device(tray.name, tray.kind, tray.model, None, tray.rack, tray.ru, tray.height_u,
                                         tray.power_w, tray.weight_kg, ""))
    pdus_by_rack = defaultdict(list)
    for pdu in plan.pdus:
        pdus_by_rack[pdu.rack].append(pdu)
    files: dict[str, str] = {}
    svgs: dict[str, str] = {}
    for rack in plan.racks:
        view = rack_view(rack, by_rack[rack.name], pdus_by_rack[rack.name], plan.site_info.facility)
        svgs[rack.name] = rack_svg(view)
        files[f"{PREFIX}/racks/{rack.name}.svg"] = svgs[rack.name]
    grouped = len(plan.racks) > RACKS_SHOWN_INDIVIDUALLY
    sus = sorted({rack.su for rack in plan.racks if rack.su is not None})
    sections: dict[Any, list[dict[str, Any]]] = {}
    layouts: dict[tuple, dict[str, Any]] = {}
    # scalable units first (the racks that repeat), site racks last; a large site shows each layout once,
    # however many SUs repeat it
    for rack in sorted(plan.racks, key=lambda r: (r.su is None, r.su or 0, r.index, r.name)):
        section = sections.setdefault("site" if rack.su is None else ("sus" if grouped else rack.su), [])
        key = rack_layout_key(rack, by_rack[rack.name]) if grouped else (rack.name,)
        if key in layouts:
            layouts[key]["also"].append(rack.name)
            continue
        layouts[key] = {"name": rack.name, "svg": Markup(svgs[rack.name]), "also": []}
        section.append(layouts[key])
    for layout in layouts.values():
        layout["same"] = _rack_list([layout["name"], *layout["also"]])
    titles = {"site": "Site racks (spines, storage, aggregation)",
              "sus": f"Scalable units {sus[0]}–{sus[-1]}" if len(sus) > 1 else f"Scalable unit {sus[0]}"
              if sus else ""}
    groups = [{"title": titles.get(key) or f"Scalable unit {key}", "racks": racks,
               "count": sum(1 + len(r["also"]) for r in racks)} for key, racks in sections.items()]
    return files, groups


def _overview(plan: Plan, costs: dict[str, Any], power: dict[str, Any]) -> dict[str, Any]:
    kinds = Counter(d.kind for d in plan.devices)
    gpu_models: Counter[str] = Counter()
    for device in plan.devices:
        if device.gpus:
            gpu_models[plan.server_facts(device).gpu_model] += device.gpus
    return {
        "cards": [
            {"label": "GPUs", "value": fmt_int(plan.summary.gpus),
             "note": ", ".join(f"{count:,} × {model}" for model, count in gpu_models.most_common())},
            {"label": "servers", "value": fmt_int(plan.summary.servers),
             "note": f"+ {plan.summary.storage_servers} storage"
                     + (f" · {kinds['control']} control" if kinds["control"] else "")},
            {"label": "switches", "value": fmt_int(plan.summary.switches),
             "note": f"{kinds['leaf']} leaf · {kinds['spine']} spine · {kinds['mgmt-switch']} mgmt/oob"},
            {"label": "racks", "value": fmt_int(plan.summary.racks),
             "note": f"{plan.summary.pdus} PDUs · {len(plan.summary.scalable_units)} SU"},
            {"label": "IT power", "value": fmt_kw(power["totals"]["it_w"]), "note": "sum of max draw"},
            {"label": "facility power", "value": fmt_kw(power["totals"]["facility_w"]),
             "note": f"at PUE {plan.site_info.facility.pue:g}"},
            {"label": "hardware", "value": fmt_money(plan.bom.hardware_total), "note": "catalog prices"},
            {"label": f"{costs['years']}-year TCO", "value": fmt_money(costs["total"]),
             "note": (f"{costs['per_gpu_hour']:,.2f} per GPU-hour" if costs["per_gpu_hour"] is not None
                      else "no GPUs")},
        ],
        "kinds": [{"kind": kind, "label": KIND_LABELS[kind], "fill": colours[0], "stroke": colours[1],
                   "count": kinds.get(kind, 0)} for kind, colours in KIND_COLOURS.items()],
        "warnings": list(plan.warnings) + power["notices"],
        "owner": plan.site_info.owner,
        "sus": ", ".join(str(su) for su in plan.summary.scalable_units),
    }


def render_report(plan: Plan) -> dict[str, str]:
    env = report_environment()
    files, rack_groups = _rack_sections(plan)
    fabric_template = env.get_template(FABRIC_TEMPLATE)
    fabrics = []
    for plane in plan.fabric:
        svg = fabric_template.render(v=fabric_view(plan, plane))
        files[f"{PREFIX}/fabric-{plane}.svg"] = svg
        fabrics.append({"plane": plane, "svg": Markup(svg), "file": f"fabric-{plane}.svg"})
    site = plan.site_info
    costs = tco(plan, site.costs, plan.cooling.blended_pue if plan.cooling else site.facility.pue)
    power = power_view(plan, site.facility, site.costs.average_load_fraction)
    files[f"{PREFIX}/bom.csv"] = bom_csv(plan)
    racks = {"groups": rack_groups, "grouped": len(plan.racks) > RACKS_SHOWN_INDIVIDUALLY}
    page = {
        "cluster": plan.cluster, "site": plan.site, "sections": SECTIONS, "titles": SECTION_TITLES,
        "overview": _overview(plan, costs, power), "racks": racks,
        "fabric": fabrics, "qos": qos_view(plan), "power": power, "ipplan": ip_plan_view(plan),
        "storage": storage_view(plan), "bom": bom_view(plan), "tco": costs,
        "costs_in": site.costs,
    }
    files[f"{PREFIX}/index.html"] = env.get_template("index.html.j2").render(**page)
    return dict(sorted(files.items()))
