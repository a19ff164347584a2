"""Which first hops the rendered switches answer: a host's gateway (or routed next hop) must be an
address configured on a switch the host is cabled to, directly or through the plane's L2 switches.

The addresses are read back from the rendered files of each NOS (never from the Plan's gateway
record), so a renderer that drops a gateway fails here:
  SONiC   config_db.json INTERFACE / VLAN_INTERFACE "<name>|<ip>/<len>" keys
  Cumulus startup.yaml interface.<name>.ip address, vrr address, vrrp virtual-router address (not eth0)
  EOS     running-config `ip address`, `ip virtual-router address`, `vrrp N ipv4` (not Management1)
A plane the declaration hands to an external router is reported apart, with who must provide it.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import NamedTuple

import yaml

from clusterforge.plan import Plan
from clusterforge.vocab import DeviceKind, GatewayMethod, Nos

__all__ = ["HostHop", "host_hops", "answered_addresses", "check_gateways"]

_EOS_IFACE = re.compile(r"^interface (\S+)$")
_EOS_ADDR = re.compile(r"^\s+(?:ip address|ip virtual-router address|vrrp \d+ ipv4) (\d+\.\d+\.\d+\.\d+)(?:/\d+)?"
                       r"(?: secondary)?$")


class HostHop(NamedTuple):
    host: str
    interface: str
    plane: str
    address: str  # the gateway (or routed next hop) the host is given
    switches: tuple[str, ...]  # the switches that may answer it: cabled, or reached through L2 switches


def _bare(cidr: str) -> str:
    return cidr.split("/", 1)[0]


def answered_addresses(nos: str, files: dict[str, str]) -> set[str]:
    """Every host-facing address a switch's rendered files configure (bare IPv4)."""
    out: set[str] = set()
    if nos == Nos.SONIC and "config_db.json" in files:
        db = json.loads(files["config_db.json"])
        for table in ("INTERFACE", "VLAN_INTERFACE"):
            for key in db.get(table, {}):
                if "|" in key:
                    out.add(_bare(key.split("|", 1)[1]))
    elif nos == Nos.CUMULUS and "startup.yaml" in files:
        for doc in yaml.safe_load(files["startup.yaml"]):
            for name, iface in ((doc.get("set") or {}).get("interface") or {}).items():
                ip = (iface or {}).get("ipv4") or (iface or {}).get("ip") or {}  # NVUE 5.15 / 5.14 spelling
                if name == "eth0":
                    continue
                out.update(_bare(a) for a in (ip.get("address") or {}))
                out.update(_bare(a) for a in ((ip.get("vrr") or {}).get("address") or {}))
                for group in ((ip.get("vrrp") or {}).get("virtual-router") or {}).values():
                    out.update(_bare(a) for a in ((group or {}).get("address") or {}))
    elif nos == Nos.EOS and "running-config" in files:
        current = ""
        for line in files["running-config"].splitlines():
            if m := _EOS_IFACE.match(line):
                current = m.group(1)
            elif not line.startswith(" "):
                current = ""
            elif current and not current.startswith("Management") and (m := _EOS_ADDR.match(line)):
                out.add(m.group(1))
    return out


def host_hops(plan: Plan) -> list[HostHop]:
    """Every gateway and routed next hop a host (GPU server, storage server, control node) is given, with the switches
    that may answer it: those cabled to the interface (or its bond members), and above them every
    switch reached over unaddressed switch-to-switch links of the same plane (the L2 access tree)."""
    kinds = {d.name: d.kind for d in plan.devices}
    cabled: dict[tuple[str, str], list[str]] = defaultdict(list)
    l2_up: dict[str, list[str]] = defaultdict(list)
    for link in plan.links:
        if kinds.get(link.b.device) in DeviceKind.SWITCHES:
            if kinds.get(link.a.device) in DeviceKind.HOSTS:
                cabled[(link.a.device, link.a.port)].append(link.b.device)
            elif not link.a_ip:  # an L2 trunk: the child bridges the VLAN up to its parent
                l2_up[link.a.device].append(link.b.device)
    out = []
    for device in plan.devices:
        if device.kind not in DeviceKind.HOSTS:
            continue
        for iface in device.interfaces:
            address = iface.gateway or iface.peer_ip
            if not address:
                continue
            seen: list[str] = []
            todo = [s for port in (iface.name, *iface.members) for s in cabled.get((device.name, port), ())]
            while todo:
                switch = todo.pop(0)
                if switch not in seen:
                    seen.append(switch)
                    todo.extend(l2_up.get(switch, ()))
            out.append(HostHop(device.name, iface.name, iface.plane, _bare(address), tuple(seen)))
    return out


def check_gateways(plan: Plan, per_switch: dict[str, dict[str, str]]
                   ) -> tuple[list[HostHop], list[HostHop], list[HostHop]]:
    """(answered, unanswered, external) host hops: answered when a switch the host reaches configures
    the address in its rendered files; external when the plane's gateway is declared external."""
    nos = {d.name: plan.plane(d.plane).nos for d in plan.devices if d.kind in DeviceKind.SWITCHES}
    addresses = {name: answered_addresses(nos[name], files) for name, files in per_switch.items()}
    answered, unanswered, external = [], [], []
    for hop in host_hops(plan):
        gateway = plan.gateways.get(hop.plane)
        if gateway is not None and gateway.method == GatewayMethod.EXTERNAL:
            external.append(hop)
        elif any(hop.address in addresses.get(s, ()) for s in hop.switches):
            answered.append(hop)
        else:
            unanswered.append(hop)
    return answered, unanswered, external
