"""Batfish snapshot of the Plan's switch configs, hosts and physical links.

Pure: (Plan, rendered switch files) in, {relative path: content} out. Layout (Batfish facts:
BfConsts relative paths, the SONiC packaging check in Batfish.java, HostConfiguration /
HostInterface / Layer1Topology JSON properties):

    configs/<switch>.cfg            EOS running-config (with the RANCID content-type line Batfish detects)
    sonic_configs/<switch>/         config_db.json + frr.conf (both mandatory per SONiC device)
    hosts/<server>.json             {"hostname", "hostInterfaces": {name: {"name", "prefix", "gateway"}}}
    batfish/layer1_topology.json    {"edges": [{"node1": {"hostname", "interfaceName"}, "node2": ...}]}

Cumulus NVUE (startup.yaml) and InfiniBand have no Batfish parser: those switches, and the links
that touch them, are left out and listed in ``left_out``. Each physical link is written in both
directions, as Batfish's example layer-1 topology does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from clusterforge.plan import Plan
from clusterforge.plan.objects import Device
from clusterforge.vocab import DeviceKind

__all__ = ["BatfishSnapshot", "export_batfish"]

_HOST_KINDS = DeviceKind.HOSTS
_RANCID_EOS = "!RANCID-CONTENT-TYPE: arista\n"


@dataclass(frozen=True)
class BatfishSnapshot:
    files: dict[str, str]
    left_out: tuple[str, ...] = field(default=())


def _switch_files(name: str, switch_files: Mapping[str, str]) -> dict[str, str]:
    prefix = f"switches/{name}/"
    return {path[len(prefix):]: content for path, content in switch_files.items() if path.startswith(prefix)}


def _host(device: Device, linked: set[str]) -> dict:
    interfaces = {}
    for iface in device.interfaces:
        entry: dict = {"name": iface.name}
        if iface.ip:
            entry["prefix"] = iface.ip
        if iface.gateway:
            entry["gateway"] = iface.gateway
        if iface.speed_gbps:
            entry["bandwidth"] = iface.speed_gbps * 1e9
        interfaces[iface.name] = entry
        for member in iface.members:  # bond members: the physical ports the layer-1 edges name
            if member in linked:
                interfaces.setdefault(member, {"name": member})
    return {"hostname": device.name, "hostInterfaces": interfaces}


def export_batfish(plan: Plan, switch_files: Mapping[str, str]) -> BatfishSnapshot:
    files: dict[str, str] = {}
    left_out: list[str] = []
    in_snapshot: set[str] = set()
    for device in plan.devices:
        if device.kind in _HOST_KINDS or device.kind == DeviceKind.PDU:
            continue
        own = _switch_files(device.name, switch_files)
        if "running-config" in own:
            files[f"configs/{device.name}.cfg"] = _RANCID_EOS + own["running-config"]
        elif "config_db.json" in own and "frr.conf" in own:
            for name in ("config_db.json", "frr.conf"):
                files[f"sonic_configs/{device.name}/{name}"] = own[name]
        elif "config_db.json" in own:
            left_out.append(f"{device.name}: SONiC without frr.conf (Batfish needs both files)")
            continue
        elif "startup.yaml" in own:
            left_out.append(f"{device.name}: Cumulus NVUE startup.yaml has no Batfish parser")
            continue
        elif "ib.json" in own:
            left_out.append(f"{device.name}: InfiniBand switch, not an IP device")
            continue
        else:
            left_out.append(f"{device.name}: no rendered config")
            continue
        in_snapshot.add(device.name)

    linked: dict[str, set[str]] = {}
    edges = []
    for link in plan.links:
        hosts = [d for d in (link.a.device, link.b.device) if plan.device(d).kind in _HOST_KINDS]
        if any(end.device not in in_snapshot and end.device not in hosts for end in (link.a, link.b)):
            continue
        a = {"hostname": link.a.device, "interfaceName": link.a.port}
        b = {"hostname": link.b.device, "interfaceName": link.b.port}
        edges += [{"node1": a, "node2": b}, {"node1": b, "node2": a}]
        for end in (link.a, link.b):
            linked.setdefault(end.device, set()).add(end.port)

    for device in plan.devices:
        if device.kind in _HOST_KINDS:
            host = _host(device, linked.get(device.name, set()))
            files[f"hosts/{device.name}.json"] = json.dumps(host, indent=2, sort_keys=True) + "\n"
    files["batfish/layer1_topology.json"] = json.dumps({"edges": edges}, indent=2) + "\n"
    return BatfishSnapshot(files=files, left_out=tuple(left_out))
