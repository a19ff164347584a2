"""The BMC seam's types: where a BMC is, what it reports, how it fails; ``Bmc`` is the protocol a client implements.

Everything here is plain frozen data; ``redfish.RedfishBmc`` fills it from a real BMC through sushy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

__all__ = ["BmcEndpoint", "BmcError", "ErrorKind", "Nic", "SystemInventory", "BiosState", "BiosCheck", "BiosChange",
           "LogEntry", "EventLog", "PowerAction", "BootTarget", "Bmc", "same_value"]

ErrorKind = Literal["unreachable", "tls", "credentials", "rejected", "protocol", "config"]
PowerAction = Literal["on", "off", "graceful_off", "reset"]
BootTarget = Literal["pxe", "uefi_http", "hdd"]

_WHAT = {
    "unreachable": "does not answer",
    "tls": "TLS verification failed",
    "credentials": "refused the credentials",
    "rejected": "rejected the request",
    "protocol": "answered unexpectedly",
    "config": "cannot be used as declared",
}


class BmcError(RuntimeError):
    """One line naming the server: ``su01-r01-gpu01: BMC https://198.18.14.11 does not answer: ...``."""

    def __init__(self, server: str, url: str, kind: ErrorKind, detail: str) -> None:
        self.server, self.url, self.kind, self.detail = server, url, kind, " ".join(detail.split())
        super().__init__(f"{server}: BMC {url} {_WHAT[kind]}: {self.detail}")


@dataclass(frozen=True)
class BmcEndpoint:
    """Where a server's BMC is and how to log in. The password is held here only, never printed (repr hides it)."""

    server: str
    url: str  # https://ADDRESS[:PORT]
    username: str
    password: str = field(repr=False)
    ca_file: Path | None = None  # PEM CA to verify the BMC's certificate against; None: the system trust store
    verify_tls: bool = True
    timeout_s: float = 5.0  # per request; a BMC that does not answer fails after about this long


@dataclass(frozen=True)
class Nic:
    id: str
    mac: str | None


@dataclass(frozen=True)
class SystemInventory:
    """What the BMC says the system is (the as-built record's hardware facts)."""

    manufacturer: str | None
    model: str | None
    serial: str | None
    uuid: str | None
    bios_version: str | None
    power_state: str | None  # On | Off | PoweringOn | PoweringOff
    boot_mode: str | None  # UEFI | Legacy
    boot_target: str | None  # the current override target (Pxe, Hdd, ...)
    boot_enabled: str | None  # Once | Continuous | Disabled
    nics: tuple[Nic, ...] = ()
    disk_bytes: tuple[int, ...] = ()  # the sizes of the disks the BMC reports (SimpleStorage), largest first

    def to_dict(self) -> dict[str, object]:
        return {"manufacturer": self.manufacturer, "model": self.model, "serial": self.serial, "uuid": self.uuid,
                "bios_version": self.bios_version, "power_state": self.power_state, "boot_mode": self.boot_mode,
                "boot_target": self.boot_target, "boot_enabled": self.boot_enabled,
                "nics": [{"id": n.id, "mac": n.mac} for n in self.nics], "disk_bytes": list(self.disk_bytes)}


def same_value(have: object, want: object) -> bool:
    """Redfish BMCs report attribute values as strings, integers or booleans: 1 == "1", True == "true"."""
    if have is None:
        return False
    if isinstance(want, bool) or isinstance(have, bool):
        return str(have).lower() == str(want).lower()
    return str(have) == str(want)


@dataclass(frozen=True)
class BiosCheck:
    """Declared attributes against the BMC: applied (current), pending (set, waiting for a reset), wrong."""

    applied: tuple[str, ...]
    pending: tuple[str, ...]
    wrong: tuple[tuple[str, object, object], ...]  # (name, declared, current)


@dataclass(frozen=True)
class BiosState:
    current: Mapping[str, object]  # Bios.Attributes
    pending: Mapping[str, object]  # Bios/Settings attributes that differ from current (apply at the next reset)
    registry: str | None = None  # the attribute registry the BMC names

    def check(self, declared: Mapping[str, object]) -> BiosCheck:
        applied, pending, wrong = [], [], []
        for name, want in sorted(declared.items()):
            if same_value(self.current.get(name), want):
                applied.append(name)
            elif same_value(self.pending.get(name), want):
                pending.append(name)
            else:
                wrong.append((name, want, self.current.get(name)))
        return BiosCheck(tuple(applied), tuple(pending), tuple(wrong))


@dataclass(frozen=True)
class BiosChange:
    """What ``apply_bios`` did: the attributes it sent to Bios/Settings, those already so (current or pending)."""

    sent: Mapping[str, object]
    unchanged: tuple[str, ...]
    reset_needed: bool  # something is pending: it takes effect at the next reset


@dataclass(frozen=True)
class LogEntry:
    id: str
    created: str | None
    severity: str | None  # OK | Warning | Critical
    message: str


@dataclass(frozen=True)
class EventLog:
    present: bool  # False: the BMC offers no LogServices for the system
    service: str | None = None
    entries: tuple[LogEntry, ...] = ()


class Bmc(Protocol):
    """A server's BMC. Every method raises ``BmcError`` (one line naming the server) and nothing else."""

    endpoint: BmcEndpoint

    def inventory(self) -> SystemInventory: ...

    def power_state(self) -> str | None: ...

    def power(self, action: PowerAction) -> bool:
        """Do it unless already so (on when on, off when off); True when something was done."""
        ...

    def bios(self) -> BiosState: ...

    def apply_bios(self, attributes: Mapping[str, object]) -> BiosChange: ...

    def boot_once(self, target: BootTarget, *, uefi: bool = True) -> None: ...

    def event_log(self, limit: int = 50) -> EventLog: ...

    def close(self) -> None: ...
