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

Hosts (HostConfiguration / HostInterface / HostStaticRoute JSON properties): Batfish gives a host
one default route, via the `gateway` of the first host interface that has one, in the order it
reads them, so only the interface the host's default route leaves by carries `gateway`
(plan/host_routes.py: the management interface); the storage and data routes are
`staticRoutes` (`prefix`, `nextHopIp`, `nextHopInterface`, `administrativeCost` = the Linux
metric, lowest preferred as Linux does). Interfaces keep the Plan's order (not sorted: `bmc` would
come first). The BMC is another device, not an interface of the host's OS, so it is left out. A
host interface has no bond or channel-group property, so a bond is modelled as the host sees it:
one interface with the address, and the layer-1 edges of its members end on it (active-backup:
either member carries the bond's address).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii as _json_str

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


def _bond_of(device: Device) -> dict[str, str]:
    """Member port -> its bond, for the host's bonds."""
    return {member: iface.name for iface in device.interfaces for member in iface.members}


def _host(plan: Plan, device: Device) -> dict:
    routes = host_routes(plan, device)
    default = next((r for r in routes if r.dst == "default"), None)
    interfaces = {}
    for iface in device.interfaces:
        if iface.plane == Plane.OOB:  # the BMC: another device
            continue
        entry: dict = {"name": iface.name}
        if iface.ip:
            entry["prefix"] = iface.ip
        if default is not None and iface.name == default.dev:
            entry["gateway"] = default.via
        if iface.speed_gbps:
            entry["bandwidth"] = iface.speed_gbps * 1e9
        interfaces[iface.name] = entry
    static = [{"prefix": r.dst, "nextHopIp": r.via, "nextHopInterface": r.dev,
               "administrativeCost": r.metric if r.metric is not None else 1}
              for r in routes if r.dst != "default"]
    out: dict = {"hostname": device.name, "hostInterfaces": interfaces}
    if static:
        out["staticRoutes"] = static
    return out


def export_batfish(plan: Plan, switch_files: Mapping[str, str]) -> BatfishSnapshot:
    files: dict[str, str] = {}
    left_out: list[str] = []
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
            files[f"configs/{device.name}.cfg"] = _RANCID_EOS + own["running-config"]
        elif nos == Nos.SONIC and "config_db.json" in own and "frr.conf" in own:
            for name in ("config_db.json", "frr.conf"):
                files[f"sonic_configs/{device.name}/{name}"] = own[name]
        elif nos == Nos.SONIC:
            left_out.append(f"{device.name}: SONiC without config_db.json and frr.conf (Batfish needs both files)")
            continue
        else:
            left_out.append(f"{device.name}: {nos} rendered without the files Batfish reads")
            continue
        in_snapshot.add(device.name)

    bonds = {d.name: _bond_of(d) for d in plan.devices if d.kind in _HOST_KINDS}
    edges = []
    for link in plan.links:
        hosts = [d for d in (link.a.device, link.b.device) if d in bonds]
        if hosts and link.plane == Plane.OOB:  # a BMC's cable: the BMC is not part of the host's model
            continue
        if any(end.device not in in_snapshot and end.device not in hosts for end in (link.a, link.b)):
            continue
        a, b = ((_json_str(end.device), _json_str(bonds.get(end.device, {}).get(end.port, end.port)))
                for end in (link.a, link.b))
        edges += [_EDGE % (*a, *b), _EDGE % (*b, *a)]

    for device in plan.devices:
        if device.kind in _HOST_KINDS:
            files[f"hosts/{device.name}.json"] = json.dumps(_host(plan, device), indent=2) + "\n"
    files["batfish/layer1_topology.json"] = _layer1_json(edges)
    return BatfishSnapshot(files=files, left_out=tuple(left_out))


def _layer1_json(edges: list[str]) -> str:
    """json.dumps({"edges": [...]}, indent=2) + "\\n" from each edge's text (_EDGE): json's indenting encoder is
    pure Python, and a million edge dicts at 512 SUs were most of the export's own time and memory."""
    if not edges:
        return '{\n  "edges": []\n}\n'
    return '{\n  "edges": [\n' + ",\n".join(edges) + "\n  ]\n}\n"
