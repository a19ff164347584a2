"""InfiniBand's structured config as typed records: ib.json, what the Plan cabled on one switch.

TypedDicts, because ib.json is their JSON dump (sorted keys) and carries no other format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired, TypedDict

__all__ = ["IbPort", "IbManagement", "IbSwitch", "IbConfig", "RECORDS"]


class IbPort(TypedDict):
    port: str
    speed_gbps: int | None
    peer_device: str | None
    peer_port: str | None
    direction: str
    tier: str


class IbManagement(TypedDict):
    interface: str
    ip: str | None
    vrf: str


class IbSwitch(TypedDict):
    hostname: str
    model: str
    role: str
    plane: str | None
    su: int | None
    rail: int | None
    mtu: int
    ports: list[IbPort]
    management: NotRequired[IbManagement]


@dataclass(frozen=True, slots=True)
class IbConfig:
    ib: IbSwitch


RECORDS = (IbPort, IbManagement, IbSwitch, IbConfig)
