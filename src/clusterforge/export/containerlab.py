"""containerlab topology of the Plan: clab.yml with the planned nodes, links and startup configs.

Pure: (Plan, rendered switch files) in, {relative path: content} out. Mapping (containerlab facts
from its kind docs and topology schema, release line v0.79):

* switches by NOS: SONiC -> ``sonic-vs`` (no startup-config support: the rendered config_db.json
  and frr.conf are bind-mounted where SONiC reads them), EOS -> ``arista_ceos`` (startup-config:
  the running-config), Cumulus -> ``nvidia_cumulusvx`` (startup-config: the NVUE startup.yaml);
  InfiniBand switches have no containerlab kind and are left out, with their links;
* servers and storage servers -> ``linux`` nodes whose ``exec`` commands set the planned addresses,
  MTUs and bonds (active-backup: the plan has no MLAG on the leaf pairs);
* the oob plane is containerlab's management network: its subnet is the oob pool, every node's
  ``mgmt-ipv4`` its oob address (switch eth0, server BMC), so the oob switches and links are not
  nodes/links of their own;
* the NOS is the Plan's (``plan.plane(device.plane).nos``), never guessed from file names;
* interface names: sonic-vs ``eth<front-panel index>``, made true by a generated ``lanemap.ini`` and
  ``port_config.ini`` bound over the image's (export/sonic_vs.py says how SONiC-VS wires ethN to
  lanes); cEOS ``EthernetX/Y`` -> ``ethX_Y``, Cumulus ``swpN`` as is, Linux names as planned.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clusterforge.export.sonic_vs import VS_BINDS, VsPortError, lanemap_ini, port_config_ini, vs_ports
from clusterforge.export.switch_files import by_switch
from clusterforge.plan import Plan
from clusterforge.plan.objects import Device, Interface
from clusterforge.render.switches.network_os import DRIVERS
from clusterforge.render.yamltext import to_yaml
from clusterforge.vocab import DeviceKind, Nos

__all__ = [
    "DEFAULT_IMAGES", "KIND_BY_NOS", "SWITCH_NOS", "ContainerlabExport", "ExportError", "export_containerlab",
    "interface_name",
]

# The NOS drivers' (render/switches/_<nos>/driver.py); a NOS without a kind is left out of the lab.
KIND_BY_NOS = {nos: d.containerlab_kind for nos, d in DRIVERS.items() if d.containerlab_kind}
# the NOSes whose rendered files the export reads (render_switches(plan, SWITCH_NOS) renders no other switch)
SWITCH_NOS = frozenset(KIND_BY_NOS)
# Image names are the site's choice (--image KIND=IMAGE); these are the common local tags.
DEFAULT_IMAGES = {
    "sonic-vs": "docker-sonic-vs:latest",
    "arista_ceos": "ceos:latest",
    "nvidia_cumulusvx": "vrnetlab/nvidia_cumulusvx:latest",
    "linux": "debian:bookworm-slim",
}
# Kinds that boot from a startup-config: the file the NOS driver names as its boot file (sonic-vs binds instead).
_STARTUP_FILE = {KIND_BY_NOS[nos]: DRIVERS[nos].startup_file for nos in (Nos.EOS, Nos.CUMULUS)}
_SONIC_BINDS = (("config_db.json", "/etc/sonic/config_db.json"), ("frr.conf", "/etc/frr/frr.conf"))
_OOB = "oob"
_HOST_KINDS = DeviceKind.HOSTS
_LINUX_IFNAME = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")
_EOS_PORT = re.compile(r"^Ethernet(\d+(?:/\d+)*)$")


class ExportError(ValueError):
    """The Plan cannot be expressed in the target format; the message names the device and port."""


@dataclass(frozen=True)
class ContainerlabExport:
    files: dict[str, str]
    left_out: tuple[str, ...] = field(default=())  # "device: reason" for devices not in the topology


def interface_name(kind: str, device: str, port: str, front_panel: Mapping[str, str] | None = None) -> str:
    """The name containerlab's endpoint uses for ``port`` of ``device`` of ``kind`` (sonic-vs: the
    ethN its generated lanemap gives the port, ``front_panel``: port -> ethN)."""
    if kind == "sonic-vs":
        if not front_panel or port not in front_panel:
            raise ExportError(f"{device}: port {port} is not in the switch's PORT table")
        return front_panel[port]
    if kind == "arista_ceos":
        match = _EOS_PORT.match(port)
        if not match:
            raise ExportError(f"{device}: port {port} is not an EOS EthernetN[/M] port")
        return "eth" + match.group(1).replace("/", "_")
    if kind == "nvidia_cumulusvx":
        if not re.fullmatch(r"swp\d+", port):
            raise ExportError(f"{device}: port {port} is not a Cumulus swpN port")
        return port
    if not _LINUX_IFNAME.match(port):
        raise ExportError(f"{device}: interface {port} is not a Linux interface name (1-15 of [A-Za-z0-9_.-])")
    return port


def _address(cidr: str | None) -> str | None:
    return cidr.split("/", 1)[0] if cidr else None


def _oob_address(device: Device) -> str | None:
    for iface in device.interfaces:
        if iface.plane == _OOB and iface.ip:
            return _address(iface.ip)
    return None


def _host_exec(interfaces: list[Interface]) -> list[str]:
    """ip(8) commands that give a Linux node its planned data/storage/management addresses."""
    commands: list[str] = []
    for iface in interfaces:
        if iface.members:
            commands.append(f"ip link add {iface.name} type bond mode active-backup miimon 100")
            for member in iface.members:
                commands += [f"ip link set dev {member} down", f"ip link set dev {member} master {iface.name}"]
        commands.append(f"ip link set dev {iface.name} mtu {iface.mtu}")
        if iface.ip:
            commands.append(f"ip address add {iface.ip} dev {iface.name}")
        commands.append(f"ip link set dev {iface.name} up")
    return commands


def _kinds(plan: Plan, rendered: Mapping[str, Mapping[str, str]]) -> tuple[dict[str, str], list[str]]:
    """containerlab kind per device, from the NOS the Plan gives its plane."""
    kinds: dict[str, str] = {}
    left_out: list[str] = []
    for device in plan.devices:
        if device.kind in _HOST_KINDS:
            kinds[device.name] = "linux"
        elif device.kind == DeviceKind.PDU:
            continue
        elif device.plane == _OOB:
            left_out.append(f"{device.name}: oob switch, stands for containerlab's management network")
        else:
            nos = plan.plane(device.plane).nos if device.plane else None
            if nos not in KIND_BY_NOS:
                left_out.append(f"{device.name}: {nos or 'no NOS'} has no containerlab kind")
            elif device.name not in rendered:
                left_out.append(f"{device.name}: no rendered config")
            else:
                kinds[device.name] = KIND_BY_NOS[nos]
    return kinds, left_out


def _node(device: Device, kind: str, image: str, rendered: Mapping[str, Mapping[str, str]],
          vs: Mapping[str, Any], linked_ports: Mapping[str, set[str]], files: dict[str, str]) -> dict[str, Any]:
    """One containerlab node; its configuration files go into ``files``."""
    node: dict[str, Any] = {"kind": kind, "image": image, "group": device.rack or device.plane or device.kind}
    mgmt = _oob_address(device)
    if mgmt:
        node["mgmt-ipv4"] = mgmt
    labels: dict[str, Any] = {"clusterforge.io/role": device.kind, "clusterforge.io/model": device.model}
    if device.su is not None:
        labels["clusterforge.io/su"] = device.su
    node["labels"] = labels
    for file, content in rendered.get(device.name, {}).items():
        files[f"configs/{device.name}/{file}"] = content
    if kind == "sonic-vs":
        files[f"configs/{device.name}/lanemap.ini"] = lanemap_ini(vs[device.name])
        files[f"configs/{device.name}/port_config.ini"] = port_config_ini(vs[device.name])
        node["binds"] = [
            f"configs/{device.name}/{src}:{dst}"
            for src, dst in (*_SONIC_BINDS, *VS_BINDS)
            if f"configs/{device.name}/{src}" in files
        ]
    elif kind in _STARTUP_FILE:
        node["startup-config"] = f"configs/{device.name}/{_STARTUP_FILE[kind]}"
    else:
        ports = linked_ports[device.name]
        planned = [i for i in device.interfaces if i.plane != _OOB and (i.name in ports or set(i.members) & ports)]
        commands = _host_exec(planned)
        if commands:
            node["exec"] = commands
    return node


def export_containerlab(
    plan: Plan, switch_files: Mapping[str, str], images: Mapping[str, str] | None = None
) -> ContainerlabExport:
    """clab.yml plus configs/<switch>/<file> for every switch that is a node."""
    images = {**DEFAULT_IMAGES, **(images or {})}
    rendered = by_switch(switch_files)
    kinds, left_out = _kinds(plan, rendered)
    vs = {}
    for name, kind in kinds.items():
        if kind == "sonic-vs":
            try:
                vs[name] = vs_ports(name, switch_files.get(f"switches/{name}/config_db.json", "{}"))
            except VsPortError as err:
                raise ExportError(str(err)) from None
    front_panels = {name: {p.name: p.ifname for p in ports} for name, ports in vs.items()}

    links = []
    linked_ports: dict[str, set[str]] = {name: set() for name in kinds}
    used: set[tuple[str, str]] = set()
    for link in plan.links:
        if link.plane == _OOB or link.a.device not in kinds or link.b.device not in kinds:
            continue
        ends = []
        for end in (link.a, link.b):
            name = interface_name(kinds[end.device], end.device, end.port, front_panels.get(end.device))
            if (end.device, name) in used:
                raise ExportError(f"{end.device}: interface {name} ({end.port}) is on two planned links")
            used.add((end.device, name))
            linked_ports[end.device].add(end.port)
            ends.append(f"{end.device}:{name}")
        links.append({"endpoints": ends, "mtu": link.mtu})

    files: dict[str, str] = {}
    nodes: dict[str, dict[str, Any]] = {}
    for device in plan.devices:
        node_kind = kinds.get(device.name)
        if node_kind is not None:
            nodes[device.name] = _node(device, node_kind, images[node_kind], rendered, vs, linked_ports, files)

    oob_pool = plan.pools.get(_OOB, {}).get("pool")
    topology: dict = {"name": plan.cluster}
    if oob_pool:
        topology["mgmt"] = {"network": f"{plan.cluster}-oob", "ipv4-subnet": oob_pool}
    topology["topology"] = {"nodes": nodes, "links": links}
    header = f"# containerlab topology of cluster {plan.cluster} (clusterforge export containerlab).\n"
    if left_out:
        header += "# Not nodes here:\n" + "".join(f"#   {line}\n" for line in left_out)
    # libyaml's dump at width 120, written without PyYAML's representer (render/yamltext: its nodes were half of
    # the export's own time at 512 SUs); the same text
    files["clab.yml"] = header + to_yaml(topology, width=120, explicit_start=False)
    return ContainerlabExport(files=files, left_out=tuple(left_out))
