"""The routes the rendered switches install, and every forwarding path between two hosts over them.

Read from the rendered files of each NOS alone (never from the Plan's addresses, ASNs or sessions):
  SONiC   frr.conf `router bgp`, `neighbor X remote-as`, `network`; config_db.json INTERFACE / VLAN_INTERFACE keys
  Cumulus startup.yaml router.bgp.autonomous-system, vrf default router bgp neighbor/network, interface ipv4 address
  EOS     running-config `router bgp`, `neighbor X remote-as`, `network`, interface `ip address`
Management ports (eth0, Management1, MGMT_INTERFACE) are not part of the fabric and are skipped.

BGP is computed as the rendered sessions make it: a session is up when both ends name each other's
address and ASN; a switch originates a `network` it has a connected route for; a path carrying the
receiver's own ASN is dropped (eBGP loop prevention); the shortest AS paths are installed side by side
(every rendered NOS declares multipath-relax); a connected route beats a learnt one. The Plan supplies
only what the switch files cannot: which host NIC is cabled to which switch, and the hosts' addresses.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field

import yaml

from clusterforge.plan import Plan
from clusterforge.vocab import DeviceKind, Nos

__all__ = ["Switch", "read_switches", "Fabric"]

_MGMT_PORTS = ("eth0", "Management1", "Management0", "mgmt0")


@dataclass
class Switch:
    name: str
    asn: int | None = None
    addresses: list[ipaddress.IPv4Interface] = field(default_factory=list)  # fabric interface addresses
    neighbors: list[tuple[str, int]] = field(default_factory=list)  # (peer address, remote-as)
    networks: list[ipaddress.IPv4Network] = field(default_factory=list)


def _frr(switch: Switch, text: str) -> None:
    for line in text.splitlines():
        words = line.split()
        if words[:2] == ["router", "bgp"]:
            switch.asn = int(words[2])
        elif words[:1] == ["neighbor"] and len(words) == 4 and words[2] == "remote-as":
            switch.neighbors.append((words[1], int(words[3])))
        elif words[:1] == ["network"]:
            switch.networks.append(ipaddress.IPv4Network(words[1]))


def _sonic(switch: Switch, files: dict[str, str]) -> None:
    db = json.loads(files["config_db.json"])
    for table in ("INTERFACE", "VLAN_INTERFACE", "LOOPBACK_INTERFACE"):
        for key in db.get(table, {}):
            if "|" in key:
                switch.addresses.append(ipaddress.IPv4Interface(key.split("|", 1)[1]))
    if "frr.conf" in files:
        _frr(switch, files["frr.conf"])


def _cumulus(switch: Switch, files: dict[str, str]) -> None:
    for doc in yaml.safe_load(files["startup.yaml"]):
        config = doc.get("set") or {}
        for name, iface in (config.get("interface") or {}).items():
            if name in _MGMT_PORTS:
                continue
            ip = (iface or {}).get("ipv4") or (iface or {}).get("ip") or {}
            switch.addresses += [ipaddress.IPv4Interface(a) for a in (ip.get("address") or {})]
        bgp = ((config.get("router") or {}).get("bgp") or {})
        if "autonomous-system" in bgp:
            switch.asn = int(bgp["autonomous-system"])
        vrf = ((((config.get("vrf") or {}).get("default") or {}).get("router") or {}).get("bgp") or {})
        for peer, decl in (vrf.get("neighbor") or {}).items():
            switch.neighbors.append((peer, int(decl["remote-as"])))
        family = (vrf.get("address-family") or {}).get("ipv4-unicast") or {}
        switch.networks += [ipaddress.IPv4Network(n) for n in (family.get("network") or {})]


_EOS_IFACE = re.compile(r"^interface (\S+)$")


def _eos(switch: Switch, files: dict[str, str]) -> None:
    current, in_bgp = "", False
    for line in files["running-config"].splitlines():
        if m := _EOS_IFACE.match(line):
            current, in_bgp = m.group(1), False
            continue
        if not line.startswith(" "):
            current, in_bgp = "", line.startswith("router bgp ")
            if in_bgp:
                switch.asn = int(line.split()[2])
            continue
        words = line.split()
        if current and not current.startswith("Management") and words[:2] == ["ip", "address"]:
            switch.addresses.append(ipaddress.IPv4Interface(words[2]))
        elif in_bgp and words[:1] == ["neighbor"] and len(words) == 4 and words[2] == "remote-as":
            switch.neighbors.append((words[1], int(words[3])))
        elif in_bgp and words[:1] == ["network"]:
            switch.networks.append(ipaddress.IPv4Network(words[1]))


_READERS = {Nos.SONIC: _sonic, Nos.CUMULUS: _cumulus, Nos.EOS: _eos}


def read_switches(plan: Plan, files: dict[str, str], planes: tuple[str, ...]) -> dict[str, Switch]:
    """The routed switches of `planes`, read from render_switches' output ("switches/<name>/<file>")."""
    per: dict[str, dict[str, str]] = defaultdict(dict)
    for path, text in files.items():
        parts = path.split("/")
        if len(parts) == 3:
            per[parts[1]][parts[2]] = text
    out = {}
    for device in plan.devices:
        if device.kind in DeviceKind.SWITCHES and device.plane in planes and device.name in per:
            switch = Switch(device.name)
            _READERS[plan.plane(device.plane).nos](switch, per[device.name])
            out[device.name] = switch
    return out


class Fabric:
    """The routes of one routed plane's switches, and walks over them toward a host address."""

    def __init__(self, switches: dict[str, Switch], attached: dict[str, set[str]]):
        self.switches = switches
        self.attached = attached  # switch -> host addresses cabled to it
        owner = {str(a.ip): name for name, s in switches.items() for a in s.addresses}
        self.sessions: dict[str, list[str]] = defaultdict(list)  # switch -> one peer per session that is up
        for name, s in switches.items():
            own = {str(a.ip) for a in s.addresses}
            for peer_ip, remote_as in s.neighbors:
                peer = owner.get(peer_ip)
                if peer is None or switches[peer].asn != remote_as:
                    continue
                if any(ip in own and asn == s.asn for ip, asn in switches[peer].neighbors):
                    self.sessions[name].append(peer)
        self.connected = {name: [a.network for a in s.addresses] for name, s in switches.items()}
        self.origins: dict[ipaddress.IPv4Network, set[str]] = defaultdict(set)
        for name, s in switches.items():
            nets = set(self.connected[name])
            for net in s.networks:
                if net in nets:  # `network` needs the route in the RIB (FRR's import-check, EOS's default)
                    self.origins[net].add(name)
        self._by_len: dict[int, set[ipaddress.IPv4Network]] = defaultdict(set)
        for prefix in self.origins:
            self._by_len[prefix.prefixlen].add(prefix)
        self._connected_by_len: dict[str, dict[int, set[ipaddress.IPv4Network]]] = {}
        for name, nets in self.connected.items():
            by: dict[int, set[ipaddress.IPv4Network]] = defaultdict(set)
            for net in nets:
                by[net.prefixlen].add(net)
            self._connected_by_len[name] = by
        self._routes: dict[frozenset[str], dict[str, list[str]]] = {}  # by originators: prefixes share routes
        self._verdict: dict[tuple[str, str], str | None] = {}

    def routes(self, prefix: ipaddress.IPv4Network) -> dict[str, list[str]]:
        """switch -> the next-hop switches (one per session) BGP installs for `prefix`."""
        origins = frozenset(self.origins[prefix])
        found = self._routes.get(origins)
        if found is not None:
            return found
        paths: dict[str, tuple[int, ...]] = {o: () for o in origins}
        hops: dict[str, list[str]] = {}
        frontier = sorted(paths)
        while frontier:  # one AS-path length per round: the shortest paths, ECMP across them
            offers: dict[str, list[tuple[tuple[int, ...], str]]] = defaultdict(list)
            for sender in frontier:
                path = (self.switches[sender].asn or 0, *paths[sender])
                for receiver in self.sessions[sender]:
                    if receiver in paths or self.switches[receiver].asn in path:
                        continue
                    offers[receiver].append((path, sender))
            for receiver, got in offers.items():
                paths[receiver] = min(p for p, _ in got)  # the one it advertises on: a deterministic tie-break
                # next hops: every session to a sender whose path is installed
                senders = {s for _, s in got}
                hops[receiver] = [p for p in self.sessions[receiver] if p in senders]
            frontier = sorted(offers)
        self._routes[origins] = hops
        return hops

    def _lookup(self, switch: str, address: ipaddress.IPv4Address) -> tuple[str, object]:
        """Longest prefix match over the switch's connected routes, then (same length) its BGP routes."""
        connected = self._connected_by_len[switch]
        for length in sorted(set(connected) | set(self._by_len), reverse=True):
            candidate = ipaddress.IPv4Network((int(address) & (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF, length))
            if candidate in connected.get(length, ()):
                return "connected", candidate
            if candidate in self._by_len.get(length, ()) and switch in self.routes(candidate):
                return "bgp", candidate
        return "none", None

    def walk(self, switch: str, dest: str, trail: tuple[str, ...] = ()) -> str | None:
        """None when every ECMP path from `switch` delivers to `dest`, else the first failing path."""
        key = (switch, dest)
        if key in self._verdict:
            return self._verdict[key]
        if switch in trail:
            return " -> ".join((*trail, switch)) + ": forwarding loop"
        kind, what = self._lookup(switch, ipaddress.IPv4Address(dest))
        verdict: str | None
        if kind == "connected":
            verdict = None if dest in self.attached.get(switch, ()) else \
                f"{' -> '.join((*trail, switch))}: {dest} is on connected {what} but not cabled here (black hole)"
        elif kind == "bgp":
            assert isinstance(what, ipaddress.IPv4Network)
            verdict = next((v for hop in sorted(set(self.routes(what)[switch]))
                            if (v := self.walk(hop, dest, (*trail, switch))) is not None), None)
        else:
            verdict = f"{' -> '.join((*trail, switch))}: no route to {dest}"
        self._verdict[key] = verdict
        return verdict
