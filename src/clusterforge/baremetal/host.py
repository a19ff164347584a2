"""A bare-metal server as its install sees it: its planned NICs (name, the network its port is on, MAC,
address, MTU) and its static routes, exactly as the installed system configures them."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MetalNic", "MetalRoute", "MetalHost"]


@dataclass(frozen=True)
class MetalNic:
    name: str  # the planned interface name (mgmt0, bond0, rail0, ...)
    bridge: str  # the network its port joins (in the lab: a bridge its VM's tap is on)
    mac: str
    ip: str | None
    mtu: int


@dataclass(frozen=True)
class MetalRoute:
    dst: str  # "default" or a prefix
    via: str | None = None
    dev: str | None = None
    metric: int | None = None


@dataclass(frozen=True)
class MetalHost:
    name: str
    nics: tuple[MetalNic, ...]  # management first
    routes: tuple[MetalRoute, ...]
