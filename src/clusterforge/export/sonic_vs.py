"""sonic-vs port wiring: which container interface (ethN) is which SONiC port.

How SONiC-VS binds them (sonic-buildimage 086b03bd70, sonic-sairedis vslib): the VS SAI reads
`lanemap.ini` (`SAI_VS_INTERFACE_LANE_MAP_FILE` in sai.profile), lines `ethN:<lane>,<lane>,...`,
and gives the port created with exactly those lanes the host interface ethN; a port whose lanes
are on no line gets none. docker-sonic-vs's start.sh (platform/vs/docker-sonic-vs/start.sh) keeps
the hwsku's original as `lanemap.ini.orig` (copied once, only if absent), writes `lanemap.ini` with
the lines whose ethN exists in the container, then `port_config.ini` with the lines of
`port_config.ini.orig` whose lanes match. The image's hwsku is Force10-S6000 on
x86_64-kvm_x86_64-r0 (Dockerfile.j2 ENV PLATFORM/HWSKU), whose lanes (25,26,27,28, ...) are not the
rendered PORT table's, so with the image's own lanemap no rendered port would get an interface.

So the export writes both `.orig` files from the rendered PORT table and bind-mounts them where
start.sh looks for them: every port gets eth<front-panel index> (the PORT entry's `index`, as the
catalog numbers front-panel ports from 1; eth0 stays management), and containerlab's links use
those names. start.sh then filters them to the interfaces containerlab created.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

__all__ = ["VsPort", "vs_ports", "lanemap_ini", "port_config_ini", "VS_HWSKU_DIR", "VS_BINDS"]

VS_HWSKU_DIR = "/usr/share/sonic/device/x86_64-kvm_x86_64-r0/Force10-S6000"
VS_BINDS = (("lanemap.ini", f"{VS_HWSKU_DIR}/lanemap.ini.orig"),
            ("port_config.ini", f"{VS_HWSKU_DIR}/port_config.ini.orig"))
_LANES = re.compile(r"^\d+(,\d+)*$")
_NUMBER = re.compile(r"(\d+)")


class VsPort(NamedTuple):
    name: str
    ifname: str  # ethN inside the container
    lanes: str
    alias: str
    port_index: int  # port_config.ini's index column
    speed: str


class VsPortError(ValueError):
    pass


def vs_ports(device: str, config_db: str) -> list[VsPort]:
    """The rendered PORT table as sonic-vs wires it: one ethN per port, numbered by front-panel index."""
    ports = json.loads(config_db).get("PORT", {})
    ordered = sorted(ports, key=lambda p: [int(n) if n.isdigit() else n for n in _NUMBER.split(p)])
    out: list[VsPort] = []
    seen_eth: dict[str, str] = {}
    seen_lanes: dict[str, str] = {}
    for ordinal, name in enumerate(ordered, start=1):
        entry = ports[name]
        lanes = str(entry.get("lanes", ""))
        if not _LANES.match(lanes):
            raise VsPortError(f"{device}: port {name} has lanes {lanes!r}; sonic-vs needs comma-separated numbers")
        index = int(entry["index"]) if str(entry.get("index", "")).isdigit() else ordinal
        ifname = f"eth{index}"
        for seen, key, what in ((seen_eth, ifname, "interface"), (seen_lanes, lanes, "lanes")):
            if key in seen:
                raise VsPortError(f"{device}: ports {seen[key]} and {name} would share {what} {key}")
            seen[key] = name
        out.append(VsPort(name, ifname, lanes, str(entry.get("alias") or name), index, str(entry.get("speed", ""))))
    return out


def lanemap_ini(ports: list[VsPort]) -> str:
    return "".join(f"{p.ifname}:{p.lanes}\n" for p in ports)


def port_config_ini(ports: list[VsPort]) -> str:
    lines = ["# name lanes alias index speed"]
    lines += [f"{p.name} {p.lanes} {p.alias} {p.port_index} {p.speed}".rstrip() for p in ports]
    return "\n".join(lines) + "\n"
