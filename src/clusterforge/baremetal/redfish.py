"""A server's Redfish BMC through sushy (OpenStack's Redfish client): inventory, BIOS, one-time boot, power, event log.

``connect(endpoint)`` logs in (HTTP basic auth, TLS verified against the declared CA) and finds the one
ComputerSystem; every call after that maps sushy's and requests' failures to one ``BmcError`` line naming the
server (does not answer / TLS / credentials refused / request rejected). Connection attempts are not retried
and each request has ``endpoint.timeout_s``, so a BMC that does not answer fails in about that long.

BIOS attributes go to the pending ``Bios/Settings`` object and apply at the next reset (Redfish's
semantics); ``bios()`` reports current and pending apart. An attribute the BMC's attribute registry does
not list, or an enumeration value it does not allow, is refused before anything is sent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import requests
import sushy
from sushy import exceptions as sx
from sushy.auth import BasicAuth
from sushy.connector import Connector

from clusterforge.baremetal.types import (
    BiosChange,
    BiosState,
    BmcEndpoint,
    BmcError,
    BootTarget,
    EventLog,
    LogEntry,
    Nic,
    PowerAction,
    SystemInventory,
    same_value,
)

__all__ = ["RedfishBmc", "connect"]

_TARGETS = {"pxe": sushy.BootSource.PXE, "uefi_http": sushy.BootSource.UEFI_HTTP, "hdd": sushy.BootSource.HDD}
_RESET = {"on": sushy.ResetType.ON, "off": sushy.ResetType.FORCE_OFF,
          "graceful_off": sushy.ResetType.GRACEFUL_SHUTDOWN, "reset": sushy.ResetType.FORCE_RESTART}


def _value(x: Any) -> str | None:
    return None if x is None else str(getattr(x, "value", x))


def _cause(exc: BaseException) -> BaseException:
    """The requests exception under a sushy ConnectionError."""
    inner = getattr(exc, "kwargs", {}).get("error") if isinstance(exc, sx.ConnectionError) else None
    return inner if isinstance(inner, BaseException) else (exc.__cause__ or exc.__context__ or exc)


@contextlib.contextmanager
def _errors(endpoint: BmcEndpoint, doing: str) -> Iterator[None]:
    server, url = endpoint.server, endpoint.url
    try:
        yield
    except BmcError:
        raise
    except sx.AccessError as exc:
        raise BmcError(server, url, "credentials", f"HTTP {exc.status_code} {doing} as user"
                       f" {endpoint.username!r}; check the referenced password") from None
    except sx.BadRequestError as exc:
        raise BmcError(server, url, "rejected", f"HTTP 400 {doing}: {exc.detail or exc.code}") from None
    except sx.HTTPError as exc:
        raise BmcError(server, url, "protocol", f"HTTP {exc.status_code} {doing}: {exc.detail or exc.code}") from None
    except (sx.ConnectionError, requests.RequestException) as exc:
        cause = _cause(exc)
        text = str(cause)
        if isinstance(cause, requests.exceptions.SSLError) or "CERTIFICATE_VERIFY_FAILED" in text:
            why = "certificate verify failed" if "CERTIFICATE_VERIFY_FAILED" in text else text.split(":")[-1].strip()
            raise BmcError(server, url, "tls", f"{why} {doing} (CA {endpoint.ca_file or 'system trust store'})") \
                from None
        if isinstance(cause, requests.exceptions.Timeout) or "timed out" in text:
            raise BmcError(server, url, "unreachable", f"no answer within {endpoint.timeout_s:g} s {doing}") from None
        short = text.rsplit(":", 1)[-1].strip(" ')\"") or type(cause).__name__
        raise BmcError(server, url, "unreachable", f"{short} {doing}") from None
    except sx.SushyError as exc:
        raise BmcError(server, url, "protocol", f"{exc} {doing}") from None


def connect(endpoint: BmcEndpoint) -> RedfishBmc:
    """Log in to the BMC and find its one system; raises ``BmcError``."""
    return RedfishBmc(endpoint)


class RedfishBmc:
    """``Bmc`` over sushy. Not thread-safe; one per server and caller."""

    def __init__(self, endpoint: BmcEndpoint) -> None:
        self.endpoint = endpoint
        if endpoint.verify_tls and endpoint.ca_file is not None and not endpoint.ca_file.is_file():
            raise BmcError(endpoint.server, endpoint.url, "config", f"CA file {endpoint.ca_file} does not exist")
        verify: bool | str = str(endpoint.ca_file) if endpoint.verify_tls and endpoint.ca_file else endpoint.verify_tls
        connector = Connector(endpoint.url, verify=verify, server_side_retries=1, server_side_retries_delay=0,
                              default_request_timeout=endpoint.timeout_s, connect_timeout=endpoint.timeout_s)
        with _errors(endpoint, "logging in"):
            self._root = sushy.Sushy(endpoint.url, auth=BasicAuth(endpoint.username, endpoint.password),
                                     connector=connector, server_side_retries=1, server_side_retries_delay=0)
            members = self._root.get_system_collection().members_identities
            if len(members) != 1:
                raise BmcError(endpoint.server, endpoint.url, "protocol",
                               f"{len(members)} systems behind this BMC; expected exactly one")
            self._system = self._root.get_system(members[0])

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._root._conn.close()

    def _refresh(self) -> Any:
        self._system.refresh(force=True)
        return self._system

    # inventory and power

    def inventory(self) -> SystemInventory:
        with _errors(self.endpoint, "reading the system inventory"):
            system = self._refresh()
            nics = tuple(Nic(str(n.identity), n.mac_address or n.permanent_mac_address)
                         for n in system.ethernet_interfaces.get_members())
            boot = system.boot
            disks: tuple[int, ...] = ()
            try:  # SimpleStorage is optional in Redfish; a BMC without it reports no disks
                disks = tuple(sorted((int(b) for b in system.simple_storage.disks_sizes_bytes if b), reverse=True))
            except (sx.SushyError, AttributeError, TypeError, ValueError):
                disks = ()
            return SystemInventory(
                manufacturer=system.manufacturer, model=system.model, serial=system.serial_number,
                uuid=system.uuid, bios_version=system.bios_version, power_state=_value(system.power_state),
                boot_mode=_value(boot.mode), boot_target=_value(boot.target), boot_enabled=_value(boot.enabled),
                nics=nics, disk_bytes=disks,
            )  # fmt: skip

    def power_state(self) -> str | None:
        with _errors(self.endpoint, "reading the power state"):
            return _value(self._refresh().power_state)

    def power(self, action: PowerAction) -> bool:
        state = self.power_state()
        if (action == "on" and state == "On") or (action in ("off", "graceful_off") and state == "Off"):
            return False
        with _errors(self.endpoint, f"requesting power {action}"):
            self._system.reset_system(_RESET[action] if not (action == "reset" and state == "Off") else _RESET["on"])
        return True

    # BIOS

    def _registry(self, bios: Any) -> dict[str, Any] | None:
        """Attribute name -> registry entry, or None when the BMC publishes no attribute registry."""
        try:
            registry = bios.get_attribute_registry()
        except (sx.SushyError, requests.RequestException, AttributeError, KeyError):
            return None
        if registry is None or registry.registry_entries is None:
            return None
        return {a.name: a for a in registry.registry_entries.attributes or ()}

    def bios(self) -> BiosState:
        with _errors(self.endpoint, "reading the BIOS attributes"):
            bios = self._refresh().bios
            bios.refresh(force=True)
            current = dict(bios.attributes or {})
            pending = {k: v for k, v in dict(bios.pending_attributes or {}).items()
                       if not same_value(current.get(k), v)}
            return BiosState(current=current, pending=pending, registry=bios._attribute_registry)

    def apply_bios(self, attributes: Mapping[str, object]) -> BiosChange:
        """Send what is neither current nor already pending to Bios/Settings (applies at the next reset)."""
        state = self.bios()
        with _errors(self.endpoint, "checking the BIOS attributes"):
            registry = self._registry(self._system.bios)
        if registry is not None:
            for name, value in sorted(attributes.items()):
                entry = registry.get(name)
                if entry is None:
                    raise BmcError(self.endpoint.server, self.endpoint.url, "rejected",
                                   f"BIOS attribute {name!r} is not in the BMC's attribute registry"
                                   f" {state.registry or ''}".rstrip())
                allowed = [str(n) for v in entry.allowable_values or ()
                           if isinstance(v, dict) and (n := v.get("ValueName")) is not None]
                if entry.attribute_type == "Enumeration" and allowed and str(value) not in allowed:
                    raise BmcError(self.endpoint.server, self.endpoint.url, "rejected",
                                   f"BIOS attribute {name}={value!r}: the registry allows {', '.join(allowed)}")
                kind = {"Boolean": bool, "Integer": int}.get(entry.attribute_type or "")
                if kind is not None and (type(value) is not kind):
                    raise BmcError(self.endpoint.server, self.endpoint.url, "rejected",
                                   f"BIOS attribute {name}={value!r}: the registry types it {entry.attribute_type}")
                if entry.read_only or entry.immutable:
                    raise BmcError(self.endpoint.server, self.endpoint.url, "rejected",
                                   f"BIOS attribute {name} is read-only in the BMC's registry")
        sent = {k: v for k, v in attributes.items()
                if not same_value(state.current.get(k), v) and not same_value(state.pending.get(k), v)}
        unchanged = tuple(sorted(k for k in attributes if k not in sent))
        if sent:
            with _errors(self.endpoint, "setting BIOS attributes"):
                self._system.bios.set_attributes(dict(sent))
        after = self.bios()
        return BiosChange(sent=sent, unchanged=unchanged, reset_needed=bool(after.pending))

    # boot

    def boot_once(self, target: BootTarget, *, uefi: bool = True) -> None:
        """Boot ``target`` at the next start only (BootSourceOverrideEnabled Once), in UEFI mode."""
        with _errors(self.endpoint, f"setting a one-time {target} boot"):
            system = self._refresh()
            mode = sushy.BootSourceOverrideMode.UEFI if uefi else sushy.BootSourceOverrideMode.LEGACY
            # the mode is only sent when it changes: an emulated BMC rebuilds the firmware set-up on every set
            system.set_system_boot_options(target=_TARGETS[target], enabled=sushy.BootSourceOverrideEnabled.ONCE,
                                           mode=None if _value(system.boot.mode) == mode.value else mode)

    # system event log

    def event_log(self, limit: int = 50) -> EventLog:
        with _errors(self.endpoint, "reading the system event log"):
            system = self._refresh()
            link = (system.json.get("LogServices") or {}).get("@odata.id")
            if not link:
                return EventLog(present=False)
            services = self._root._conn.get(link).json().get("Members") or []
            for member in services:
                service = self._root._conn.get(member["@odata.id"]).json()
                entries_link = (service.get("Entries") or {}).get("@odata.id")
                if not entries_link:
                    continue
                raw = self._root._conn.get(entries_link).json().get("Members") or []
                entries = tuple(LogEntry(id=str(e.get("Id", "")), created=e.get("Created"),
                                         severity=e.get("Severity"), message=str(e.get("Message", ""))[:500])
                                for e in raw[-limit:])
                return EventLog(present=True, service=str(service.get("Id", "")), entries=entries)
            return EventLog(present=True, service=None)
