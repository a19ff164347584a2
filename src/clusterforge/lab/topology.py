"""The lab's input: a small, frozen description of hosts, interfaces and segments.

Built from the Plan by :mod:`clusterforge.lab.from_plan`; everything else in
:mod:`clusterforge.lab` consumes only this.  See docs/CONTRACTS.md ("Lab topology").
"""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# One DNS label: used for lab names, host names and segment names.  No dots, so
# ``cf-<lab>.<host>`` (the netns name) can be split back unambiguously.
_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
# Linux interface names: at most 15 bytes, no '/', ':' or whitespace.
_IFNAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}$")
# A bind target inside a container: absolute, no ':' (nspawn's --bind separator), no spaces.
_IMAGE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_DATA_DIR = re.compile(r"^(/[A-Za-z0-9._-]+)+$")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LabInterface(_Frozen):
    """One interface of a lab host (or the control endpoint on the management segment)."""

    name: str = "ctl0"
    segment: str
    ip: str = Field(description="address with prefix length, e.g. 198.18.8.11/24")
    mtu: int = Field(default=1500, ge=576, le=9216)
    vlan: int | None = Field(default=None, ge=1, le=4094)

    @field_validator("name")
    @classmethod
    def _ifname(cls, v: str) -> str:
        if not _IFNAME.match(v):
            raise ValueError(f"interface name {v!r} is not a valid Linux interface name (max 15 chars)")
        return v

    @field_validator("ip")
    @classmethod
    def _cidr(cls, v: str) -> str:
        if "/" not in v:
            raise ValueError(f"ip {v!r} needs a prefix length (CIDR)")
        return str(ipaddress.ip_interface(v))

    @property
    def address(self) -> str:
        """The address without prefix length."""
        return str(ipaddress.ip_interface(self.ip).ip)


class LabRoute(_Frozen):
    """A static route on a lab host, installed from the host side (``ip -n <ns> route replace``)."""

    dst: str = Field(description='"default" or a prefix, e.g. 198.18.0.0/16')
    via: str | None = None
    dev: str | None = None
    metric: int | None = Field(default=None, ge=0, le=2**32 - 1)

    @field_validator("dst")
    @classmethod
    def _dst(cls, v: str) -> str:
        return v if v == "default" else str(ipaddress.ip_network(v, strict=False))

    @field_validator("via")
    @classmethod
    def _via(cls, v: str | None) -> str | None:
        return None if v is None else str(ipaddress.ip_address(v))

    @model_validator(mode="after")
    def _target(self) -> LabRoute:
        if self.via is None and self.dev is None:
            raise ValueError(f"route {self.dst}: needs via and/or dev")
        return self


class LabSegment(_Frozen):
    """An L2 segment: ``bridge`` is a Linux bridge, ``p2p`` a veth between exactly two hosts."""

    name: str
    kind: Literal["bridge", "p2p"] = "bridge"
    mtu: int = Field(default=1500, ge=576, le=9216)

    @field_validator("name")
    @classmethod
    def _label(cls, v: str) -> str:
        if not _LABEL.match(v):
            raise ValueError(f"segment name {v!r} must be a lowercase DNS label")
        return v


class LabHost(_Frozen):
    name: str
    kind: Literal["server", "router"] = "server"
    interfaces: tuple[LabInterface, ...] = ()
    routes: tuple[LabRoute, ...] = ()
    frr_conf: str | None = None
    # Container paths backed by a directory of this machine's file system (under the lab's directory,
    # removed with the lab): storage bricks, which need a file system that keeps trusted.* xattrs.
    data_dirs: tuple[str, ...] = ()
    fuse: bool = Field(default=False, description="pass /dev/fuse in (FUSE file system clients and servers)")
    kubelet: bool = Field(default=False, description="runs containerd and a kubelet (clusterforge.lab.kubelet_host)")
    # A golden image layer (clusterforge.lab.image) between the base rootfs and the host's own layer:
    # the host boots with what the image's roles installed. None: the base rootfs alone.
    image: str | None = None

    @field_validator("name")
    @classmethod
    def _label(cls, v: str) -> str:
        if not _LABEL.match(v):
            raise ValueError(f"host name {v!r} must be a lowercase DNS label (no dots)")
        return v

    @field_validator("image")
    @classmethod
    def _image(cls, v: str | None) -> str | None:
        if v is not None and not _IMAGE.match(v):
            raise ValueError(f"image {v!r} must be an image name: lowercase letters, digits and '-' (max 63)")
        return v

    @field_validator("data_dirs")
    @classmethod
    def _dirs(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for d in v:
            if not _DATA_DIR.match(d) or "/../" in f"{d}/" or "/./" in f"{d}/":
                raise ValueError(f"data dir {d!r} must be an absolute path of letters, digits, '.', '_', '-'")
        return v

    @model_validator(mode="after")
    def _unique_ifnames(self) -> LabHost:
        names = [i.name for i in self.interfaces]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"host {self.name}: duplicate interface names {sorted(dup)}")
        for r in self.routes:
            if r.dev is not None and r.dev not in names:
                raise ValueError(f"host {self.name}: route {r.dst} uses unknown interface {r.dev}")
        if self.frr_conf is not None and self.kind != "router":
            raise ValueError(f"host {self.name}: frr_conf is only for routers")
        return self


class LabTopology(_Frozen):
    name: str = "lab"
    hosts: tuple[LabHost, ...]
    segments: tuple[LabSegment, ...]
    control: LabInterface
    apt_proxy: bool = Field(
        default=False, description="serve the hosts' apt through a caching proxy on the control address"
    )
    control_extra: tuple[str, ...] = Field(
        default=(),
        description="more addresses (CIDR) for this machine, e.g. other blocks' gateways; each sits on the "
        "bridge segment whose hosts share its subnet (else on the control segment)",
    )

    @field_validator("name")
    @classmethod
    def _label(cls, v: str) -> str:
        if not _LABEL.match(v):
            raise ValueError(f"lab name {v!r} must be a lowercase DNS label")
        return v

    @field_validator("control_extra")
    @classmethod
    def _cidrs(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        out = tuple(str(ipaddress.ip_interface(c)) for c in v)
        if any("/" not in c for c in v):
            raise ValueError("control_extra addresses need a prefix length (CIDR)")
        return out

    @model_validator(mode="after")
    def _consistent(self) -> LabTopology:
        segs = {s.name: s for s in self.segments}
        if len(segs) != len(self.segments):
            raise ValueError("duplicate segment names")
        hosts = [h.name for h in self.hosts]
        if len(set(hosts)) != len(hosts):
            raise ValueError("duplicate host names")
        members: dict[str, list[str]] = {s: [] for s in segs}
        addrs: dict[str, str] = {}
        for h in self.hosts:
            for i in h.interfaces:
                if i.segment not in segs:
                    raise ValueError(f"{h.name}/{i.name}: unknown segment {i.segment!r}")
                seg_mtu = segs[i.segment].mtu
                if i.mtu > seg_mtu:
                    raise ValueError(f"{h.name}/{i.name}: mtu {i.mtu} exceeds {i.segment} mtu {seg_mtu}")
                members[i.segment].append(h.name)
                a = i.address
                if a in addrs:
                    raise ValueError(f"{h.name}/{i.name}: address {a} already used by {addrs[a]}")
                addrs[a] = f"{h.name}/{i.name}"
        for s in self.segments:
            if s.kind == "p2p" and len(members[s.name]) != 2:
                raise ValueError(f"p2p segment {s.name} needs exactly 2 endpoints, has {members[s.name]}")
        c = self.control
        if c.segment not in segs or segs[c.segment].kind != "bridge":
            raise ValueError(f"control segment {c.segment!r} must be a bridge segment")
        for cidr in (c.ip, *self.control_extra):
            a = str(ipaddress.ip_interface(cidr).ip)
            if a in addrs:
                raise ValueError(f"control address {a} already used by {addrs[a]}")
            addrs[a] = "control"
        return self

    # --- convenience -------------------------------------------------------
    def host(self, name: str) -> LabHost:
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    def segment(self, name: str) -> LabSegment:
        for s in self.segments:
            if s.name == name:
                return s
        raise KeyError(name)

    def control_addresses(self) -> list[tuple[str, str]]:
        """(CIDR, bridge segment) for every address of this machine: the control address on
        its segment, each extra one on the bridge segment whose host interfaces share its subnet."""
        res = [(self.control.ip, self.control.segment)]
        for cidr in self.control_extra:
            net = ipaddress.ip_interface(cidr).network
            seg = next(
                (
                    i.segment
                    for h in self.hosts
                    for i in h.interfaces
                    if self.segment(i.segment).kind == "bridge" and ipaddress.ip_interface(i.ip).ip in net
                ),
                self.control.segment,
            )
            res.append((cidr, seg))
        return res

    def reachable_ip(self, host: str) -> str | None:
        """The host address this machine reaches directly (no prefix): its management address,
        else one on a bridge segment where a control address shares its subnet (e.g. a switch's
        oob port); None when the host is only reachable through its namespace."""
        mgmt = self.management_ip(host)
        if mgmt:
            return mgmt
        ctl = [(ipaddress.ip_interface(c).network, seg) for c, seg in self.control_addresses()]
        for i in self.host(host).interfaces:
            a = ipaddress.ip_interface(i.ip).ip
            if any(seg == i.segment and a in net for net, seg in ctl):
                return str(a)
        return None

    def management_ip(self, host: str) -> str | None:
        """The host's address on the control (management) segment, without prefix, if any."""
        for i in self.host(host).interfaces:
            if i.segment == self.control.segment:
                return i.address
        return None
