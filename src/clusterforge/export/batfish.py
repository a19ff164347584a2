"""Batfish snapshot of the Plan's switch configs, hosts and physical links.

Pure: (Plan, rendered switch files) in, {relative path: content} out. Layout (Batfish facts:
BfConsts relative paths, the SONiC packaging check in Batfish.java, HostConfiguration /
HostInterface / Layer1Topology JSON properties):

    configs/<switch>.cfg            EOS running-config (with the RANCID content-type line Batfish detects)
    sonic_configs/<switch>/         config_db.json + frr.conf (both mandatory per SONiC device)
    hosts/<server>.json             {"hostname", "hostInterfaces": {name: {"name", "prefix", ...}}, "staticRoutes"}
    batfish/layer1_topology.json    {"edges": [{"node1": {"hostname", "interfaceName"}, "node2": ...}]}

Cumulus NVUE (startup.yaml) and InfiniBand have no Batfish parser: those switches, and the links
that touch them, are left out and listed in ``left_out``. Each physical link is written in both
directions, as Batfish's example layer-1 topology does.

Hosts, in the host model Batfish parses (export/batfish_formats.py): `hostname`, `hostInterfaces` and per
interface `name`, `prefix`, `gateway`, `bandwidth` only. That model has no static routes: a host gets its
connected subnets and one default route, from the `gateway` of the interface the Plan's default route
leaves by (plan/host_routes.py: the management interface); the storage-pool and data-pool routes the host
installs are not in the snapshot. Batfish deactivates interfaces named like management ports (`mgmt0`), so
an interface whose name matches is written as `host-<name>`, in the host file and in the layer-1 edges,
and a trace can start there. Interfaces keep the Plan's order. The BMC is another device, not an interface
of the host's OS, so it is left out. A host interface has no bond or channel-group property, so a bond is
modelled as the host sees it: one interface with the address, and the layer-1 edges of its members end on
it (active-backup: either member carries the bond's address).

Switch files are copied as rendered, except where Batfish's own parser would drop what the switch runs
(each such change is listed in ``adapted``): SONiC VLANs get the `members` list Batfish takes a VLAN's
ports from (the switch's VLAN_MEMBER entries, which both SONiC and Batfish read, stay as they are), and
properties Batfish's strict config_db classes do not declare (`VLAN.mtu`, the SVI's
`static_anycast_gateway`) are left out of the copy, since one of them fails the whole table; an EOS
`speed` form Batfish's grammar lacks (`400g-8`, `800g-8`) is written as `forced <rate>gfull` where the
grammar has that rate, and dropped where it has none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii as _json_str

from clusterforge.export.batfish_formats import EOS_SPEEDS, MANAGEMENT_INTERFACES, SONIC_STRICT_TABLES
from clusterforge.export.switch_files import by_switch
from clusterforge.plan import Plan
from clusterforge.plan.host_routes import host_routes
from clusterforge.plan.objects import Device
from clusterforge.render.switches.network_os import DRIVERS
from clusterforge.vocab import DeviceKind, Nos, Plane

__all__ = ["BatfishSnapshot", "SWITCH_NOS", "export_batfish"]

_HOST_KINDS = DeviceKind.HOSTS
_RANCID_EOS = "!RANCID-CONTENT-TYPE: arista\n"
# NOSes Batfish has no parser for: their switches are left out whatever they render (every driver writes its boot
# file), so the export reads none of their files
_NO_PARSER = {Nos.CUMULUS: "Cumulus NVUE startup.yaml has no Batfish parser",
              Nos.INFINIBAND: "InfiniBand switch, not an IP device"}
# the NOSes whose rendered files the export reads (render_switches(plan, SWITCH_NOS) renders no other switch)
SWITCH_NOS = frozenset(DRIVERS) - frozenset(_NO_PARSER)
# one edge of layer1_topology.json as json.dumps(..., indent=2) writes it inside {"edges": [...]}
_EDGE = ('    {\n      "node1": {\n        "hostname": %s,\n        "interfaceName": %s\n      },\n'
         '      "node2": {\n        "hostname": %s,\n        "interfaceName": %s\n      }\n    }')


@dataclass(frozen=True)
class BatfishSnapshot:
    files: dict[str, str]
    left_out: tuple[str, ...] = field(default=())
    adapted: tuple[str, ...] = field(default=())  # "device: change" where the copy differs from the rendered file


def _active_name(name: str) -> str:
    """The host interface's name as the snapshot writes it: one Batfish does not deactivate."""
    return f"host-{name}" if MANAGEMENT_INTERFACES.search(name) else name


def _bond_of(device: Device) -> dict[str, str]:
    """Member port -> its bond, for the host's bonds."""
    return {member: iface.name for iface in device.interfaces for member in iface.members}


def _host(plan: Plan, device: Device) -> dict:
    default = next((r for r in host_routes(plan, device) if r.dst == "default"), None)
    interfaces = {}
    for iface in device.interfaces:
        if iface.plane == Plane.OOB:  # the BMC: another device
            continue
        name = _active_name(iface.name)
        entry: dict = {"name": name}
        if iface.ip:
            entry["prefix"] = iface.ip
        if default is not None and iface.name == default.dev:
            entry["gateway"] = default.via
        if iface.speed_gbps:
            entry["bandwidth"] = iface.speed_gbps * 1e9
        interfaces[name] = entry
    return {"hostname": device.name, "hostInterfaces": interfaces}


def _sonic_config_db(text: str) -> tuple[str, list[str]]:
    """The config_db.json Batfish reads in full: VLAN `members` from VLAN_MEMBER, and no property its strict
    classes do not declare. The text as rendered where nothing changes."""
    if '"VLAN' not in text:
        return text, []
    doc = json.loads(text)
    changes: list[str] = []
    members: dict[str, list[str]] = {}
    for key in doc.get("VLAN_MEMBER", {}):
        vlan, _, port = key.partition("|")
        members.setdefault(vlan, []).append(port)
    for vlan, entry in doc.get("VLAN", {}).items():
        if members.get(vlan) and entry.get("members") != members[vlan]:
            entry["members"] = members[vlan]
            changes.append(f"VLAN {vlan} members from VLAN_MEMBER")
    for table, declared in SONIC_STRICT_TABLES.items():
        for key, entry in doc.get(table, {}).items():
            for prop in [p for p in entry if p not in declared]:
                del entry[prop]
                changes.append(f"{table} {key} {prop} left out")
    if not changes:
        return text, []
    return json.dumps(doc, indent=4) + "\n", changes


_EOS_MBPS_FULL = {"1g": "1000full", "10g": "10000full"}  # rates Batfish's grammar spells in Mb/s
_EOS_SPEED_LINE = re.compile(r"(?m)^(   speed )(\S+)\n")


def _eos_running_config(text: str) -> tuple[str, list[str]]:
    """EOS `speed` lines in the forms Batfish's grammar parses (see the module docstring)."""
    changes: list[str] = []

    def speed(match: re.Match[str]) -> str:
        value = match.group(2)
        if value in EOS_SPEEDS:
            return match.group(0)
        forced = _EOS_MBPS_FULL.get(value) or re.sub(r"^(\d+g)(-\d+)?$", r"\1full", value)
        if forced in EOS_SPEEDS:
            changes.append(f"speed {value} as forced {forced}")
            return f"{match.group(1)}forced {forced}\n"
        changes.append(f"speed {value} left out")
        return ""

    return _EOS_SPEED_LINE.sub(speed, text), changes


def _summary(device: str, changes: list[str]) -> str:
    counted: dict[str, int] = {}
    for change in changes:
        counted[change] = counted.get(change, 0) + 1
    return f"{device}: " + "; ".join(f"{c} (x{n})" if n > 1 else c for c, n in counted.items())


def export_batfish(plan: Plan, switch_files: Mapping[str, str]) -> BatfishSnapshot:
    files: dict[str, str] = {}
    left_out: list[str] = []
    adapted: list[str] = []
    in_snapshot: set[str] = set()
    rendered = by_switch(switch_files)
    for device in plan.devices:
        if device.kind in _HOST_KINDS or device.kind == DeviceKind.PDU:
            continue
        nos = plan.plane(device.plane).nos if device.plane else None  # the Plan's NOS, never guessed from files
        if nos in _NO_PARSER:
            left_out.append(f"{device.name}: {_NO_PARSER[nos]}")
            continue
        own = rendered.get(device.name, {})
        if not own:
            left_out.append(f"{device.name}: no rendered config")
            continue
        if nos == Nos.EOS and "running-config" in own:
            text, changes = _eos_running_config(own["running-config"])
            files[f"configs/{device.name}.cfg"] = _RANCID_EOS + text
        elif nos == Nos.SONIC and "config_db.json" in own and "frr.conf" in own:
            text, changes = _sonic_config_db(own["config_db.json"])
            files[f"sonic_configs/{device.name}/config_db.json"] = text
            files[f"sonic_configs/{device.name}/frr.conf"] = own["frr.conf"]
        elif nos == Nos.SONIC:
            left_out.append(f"{device.name}: SONiC without config_db.json and frr.conf (Batfish needs both files)")
            continue
        else:
            left_out.append(f"{device.name}: {nos} rendered without the files Batfish reads")
            continue
        if changes:
            adapted.append(_summary(device.name, changes))
        in_snapshot.add(device.name)

    bonds = {d.name: _bond_of(d) for d in plan.devices if d.kind in _HOST_KINDS}
    edges = []
    for link in plan.links:
        hosts = [d for d in (link.a.device, link.b.device) if d in bonds]
        if hosts and link.plane == Plane.OOB:  # a BMC's cable: the BMC is not part of the host's model
            continue
        if any(end.device not in in_snapshot and end.device not in hosts for end in (link.a, link.b)):
            continue
        a, b = ((_json_str(end.device), _json_str(_port_name(bonds, end.device, end.port)))
                for end in (link.a, link.b))
        edges += [_EDGE % (*a, *b), _EDGE % (*b, *a)]

    for device in plan.devices:
        if device.kind in _HOST_KINDS:
            files[f"hosts/{device.name}.json"] = json.dumps(_host(plan, device), indent=2) + "\n"
    files["batfish/layer1_topology.json"] = _layer1_json(edges)
    return BatfishSnapshot(files=files, left_out=tuple(left_out), adapted=tuple(adapted))


def _port_name(bonds: dict[str, dict[str, str]], device: str, port: str) -> str:
    """A link end's interface as the snapshot names it: a host's bond member ends on the bond."""
    if device not in bonds:
        return port
    return _active_name(bonds[device].get(port, port))


def _layer1_json(edges: list[str]) -> str:
    """json.dumps({"edges": [...]}, indent=2) + "\\n" from each edge's text (_EDGE): json's indenting encoder is
    pure Python, and a million edge dicts at 512 SUs were most of the export's own time and memory."""
    if not edges:
        return '{\n  "edges": []\n}\n'
    return '{\n  "edges": [\n' + ",\n".join(edges) + "\n  ]\n}\n"
