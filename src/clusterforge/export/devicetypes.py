"""Device types of the Plan's hardware in the NetBox/Nautobot device-type library YAML form.

One file per (manufacturer, model), ``device-types/<Manufacturer>/<model>.yaml``, the layout of the
netbox-community devicetype-library that NetBox's and Nautobot's importers read, written to pass the
library's own CI: the file is named after the model, the slug is ``<manufacturer>-<model>`` slugified
as the library's tests do it, ``---`` starts every document, sequences are indented (yamllint
``--strict`` with the library's rules), no empty strings. A model the library already has keeps the
library's manufacturer, model, slug and file name (export/devicetype_library.py), so an import beside
the library updates that type instead of duplicating it; ``part_number`` is written only where the
catalog declares the real one. Fields and enum
values are the library schema's (schema/devicetype.json, components.json, generated_schema.json):
required manufacturer, model, slug (``[-a-z0-9_]+``), u_height (multiple of 0.5), is_full_depth;
interfaces, power-ports and power-outlets with types from the library's enums.

Switch port names depend on the NOS (SONiC Ethernet<lane>, Cumulus swpN, EOS EthernetN/1), so a
switch model gets one device type per NOS it runs in the Plan; the NOS whose names the library's own
entry uses gets the library's type, any other the model ``<model>-<nos>`` (slug ``<manufacturer>-<model>-<nos>``);
devices created from the type then carry exactly the names the rendered configs use.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from clusterforge.export.devicetype_library import library_entry, manufacturer
from clusterforge.model import ClusterSpec
from clusterforge.plan import Plan
from clusterforge.plan.ports import port_name
from clusterforge.vocab import Nos, Plane, Transport

__all__ = ["DeviceType", "device_types", "export_device_types", "interface_type"]

_ETHERNET_TYPES = {1: "1000base-t", 10: "10gbase-x-sfpp", 25: "25gbase-x-sfp28", 40: "40gbase-x-qsfpp",
                   50: "50gbase-x-sfp56", 100: "100gbase-x-qsfp28", 200: "200gbase-x-qsfp56",
                   400: "400gbase-x-osfp", 800: "800gbase-x-osfp"}
_INFINIBAND_TYPES = {100: "infiniband-edr", 200: "infiniband-hdr", 400: "infiniband-ndr", 800: "infiniband-xdr"}
# IEC 60320 inlets: C14 is rated 10 A, C20 16 A; at 230 V a PSU above ~2.3 kW needs a C20.
_C14_MAX_W = 2300
_OUTLET_MIX = re.compile(r"(\d+)\s*x\s*C(13|19)\b", re.IGNORECASE)


@dataclass(frozen=True)
class DeviceType:
    """One device-type library entry; ``key`` ties it to the catalog (and NOS for switches)."""

    key: tuple[str, str]  # (catalog model, NOS or "")
    manufacturer: str
    slug: str
    data: dict
    file: str = ""  # the file name under device-types/<manufacturer>/ (default: <model>.yaml)

    @property
    def path(self) -> str:
        return f"device-types/{self.manufacturer}/{self.file or self.data['model'] + '.yaml'}"

    def to_yaml(self) -> str:
        return yaml.dump(self.data, Dumper=_LibraryDumper, sort_keys=False, default_flow_style=False, width=4096,
                         explicit_start=True, allow_unicode=True)


class _LibraryDumper(yaml.SafeDumper):
    """Block sequences indented under their key (yamllint ``indent-sequences: true``, the library's rule)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        return super().increase_indent(flow, False)


def slugify(text: str) -> str:
    """A model or manufacturer as the library's tests slugify it (casefold, ' ' and '_' to '-', '+' spelled
    out, '/' to '-'), then anything outside the slug grammar ``[-a-z0-9_]`` to '-'."""
    text = text.casefold().replace(" ", "-").replace("-+", "-plus").replace("+", "-plus-").replace("_", "-")
    text = text.replace("&", "-and-").replace("/", "-")
    return re.sub(r"-+", "-", re.sub(r"[^-a-z0-9_]", "-", text)).strip("-")


def _identity(key: str, vendor: str, nos: str = "") -> tuple[str, str, str, str]:
    """(manufacturer, model, slug, file): the library's own where it has this model (and NOS's port names)."""
    entry = library_entry(key, nos)
    if entry is not None:
        return entry.manufacturer, entry.model, entry.slug, entry.file
    known = library_entry(key)
    maker = known.manufacturer if known is not None else manufacturer(vendor)
    base = known.model if known is not None else key
    model = re.sub(r"[^A-Za-z0-9_ -]", "-", f"{base}-{nos}" if nos else base)
    maker_slug, model_slug = slugify(maker), slugify(model)
    slug = model_slug if model_slug.startswith(maker_slug + "-") else f"{maker_slug}-{model_slug}"
    return maker, model, slug, f"{model}.yaml"


def _drop_empty(data: dict) -> dict:
    """The library's CI fails a file with an empty string anywhere."""
    return {k: v for k, v in data.items() if v != "" and v is not None}


def interface_type(speed_gbps: int | None, transport: str = "ethernet") -> str:
    table = _INFINIBAND_TYPES if transport == Transport.INFINIBAND else _ETHERNET_TYPES
    return table.get(int(speed_gbps or 0), "other")


def _inlet(watts: float) -> str:
    return "iec-60320-c14" if watts <= _C14_MAX_W else "iec-60320-c20"


def _server_type(key: str, model, plan: Plan, transport: str) -> DeviceType:
    devices = [d for d in plan.devices if d.model == key]
    physical: dict[str, dict[str, Any]] = {}
    speeds = {"data": model.nics.data.speed_gbps, "storage": model.nics.storage.speed_gbps,
              "management": model.nics.management.speed_gbps, "oob": model.nics.oob.speed_gbps}
    for device in devices:
        for iface in device.interfaces:
            names = iface.members or (iface.name,)
            for name in names:
                kind = interface_type(speeds.get(iface.plane), transport if iface.plane == Plane.DATA else "ethernet")
                entry: dict[str, Any] = {"name": name, "type": kind}
                if iface.plane == Plane.OOB:
                    entry["mgmt_only"] = True
                physical.setdefault(name, entry)
    per_psu = model.psu.rating_w
    maker, name, slug, file = _identity(key, model.vendor)
    data = {
        "manufacturer": maker, "model": name, "slug": slug, "part_number": model.part_number,
        "u_height": model.height_u, "is_full_depth": True, "airflow": "front-to-rear",
        "weight": model.weight_kg, "weight_unit": "kg", "description": model.description[:200],
        "comments": f"clusterforge catalog entry {key}. Source: {model.source}".strip(),
        "interfaces": list(physical.values()),
        "power-ports": [{"name": f"psu{i}", "type": _inlet(per_psu), "maximum_draw": int(per_psu)}
                        for i in range(1, model.psu.count + 1)],
    }
    return DeviceType((key, ""), maker, slug, _drop_empty(data), file)


def _switch_type(key: str, model, nos: str, psus: int) -> DeviceType:
    transport = "infiniband" if nos == Nos.INFINIBAND else "ethernet"
    interfaces: list[dict] = [{"name": "eth0", "type": "1000base-t", "mgmt_only": True}]  # IB switches too
    speed = interface_type(model.speed_gbps, transport)
    interfaces += [{"name": port_name(nos, index, model.lanes_per_port), "type": speed} for index in range(model.ports)]
    interfaces += [{"name": port_name(nos, model.ports + index, model.lanes_per_port),
                    "type": interface_type(model.uplink_speed_gbps or model.speed_gbps, transport)}
                   for index in range(model.uplinks)]
    per_psu = model.max_draw_w  # each PSU carries the whole switch when its twin fails
    maker, name, slug, file = _identity(key, model.vendor, nos)
    data = {
        "manufacturer": maker, "model": name, "slug": slug,
        "part_number": model.part_number, "u_height": model.height_u, "is_full_depth": True,
        "weight": model.weight_kg, "weight_unit": "kg", "description": model.description[:200],
        "comments": f"clusterforge catalog entry {key}, port names as {nos} spells them. Source: {model.source}",
        "interfaces": interfaces,
        "power-ports": [{"name": f"psu{i}", "type": _inlet(per_psu), "maximum_draw": max(1, int(per_psu))}
                        for i in range(1, psus + 1)],
    }
    return DeviceType((key, nos), maker, slug, _drop_empty(data), file)


def _pdu_type(key: str, model) -> DeviceType:
    outlets = []
    for count, kind in _OUTLET_MIX.findall(model.description):
        outlets += [f"iec-60320-c{kind}"] * int(count)
    if len(outlets) != model.outlets:
        outlets = ["iec-60320-c13"] * model.outlets  # the description does not split the outlets
    legs = ("A", "B", "C") if model.phases == 3 else ("A",)
    inlet_w = model.rating_a * model.voltage_v * (3 ** 0.5 if model.phases == 3 else 1)
    maker, name, slug, file = _identity(key, model.vendor)
    data = {
        "manufacturer": maker, "model": name, "slug": slug, "part_number": model.part_number,
        "u_height": model.height_u, "is_full_depth": False,
        "weight": model.weight_kg, "weight_unit": "kg", "description": model.description[:200],
        "comments": f"clusterforge catalog entry {key}. Source: {model.source}".strip(),
        "power-ports": [{"name": "inlet",
                         "type": "iec-60309-3p-n-e-6h" if model.phases == 3 else "iec-60309-p-n-e-6h",
                         "maximum_draw": int(inlet_w)}],
        "power-outlets": [
            {"name": f"outlet{i}", "type": kind, "power_port": "inlet", "feed_leg": legs[(i - 1) % len(legs)]}
            for i, kind in enumerate(outlets, start=1)
        ],
    }
    return DeviceType((key, ""), maker, slug, _drop_empty(data), file)


def _switch_nos(plan: Plan) -> dict[str, str]:
    """Switch name -> NOS of its plane (InfiniBand planes: infiniband)."""
    from clusterforge.render.switches.facts import switch_nos

    return switch_nos(plan)


def device_types(spec: ClusterSpec, plan: Plan) -> list[DeviceType]:
    """Every device type the Plan uses, in catalog order: servers, switches per NOS, PDUs."""
    catalog = spec.catalog
    used_models = {d.model for d in plan.devices}
    data_transport = "infiniband" if any(
        f.transport == Transport.INFINIBAND for p, f in plan.fabric.items() if p == Plane.DATA) else "ethernet"
    types = [_server_type(k, m, plan, data_transport) for k, m in catalog.servers.items() if k in used_models]
    nos_of = _switch_nos(plan)
    seen: dict[tuple[str, str], int] = {}
    for device in plan.devices:
        if device.model in catalog.switches and device.name in nos_of:
            key = (device.model, nos_of[device.name])
            seen[key] = max(seen.get(key, 0), len(device.psu_feeds) or 2)
    types += [_switch_type(k, catalog.switches[k], nos, psus) for (k, nos), psus in sorted(seen.items())]
    used_pdus = {p.model for p in plan.pdus}
    types += [_pdu_type(k, m) for k, m in catalog.pdus.items() if k in used_pdus]
    return types


def export_device_types(types: Iterable[DeviceType]) -> dict[str, str]:
    return {t.path: t.to_yaml() for t in types}
