"""Reconcile a Nautobot server with the Plan's Wants: create what is missing, update what differs,
delete what this cluster created and no longer plans. A second push of the same Plan changes
nothing; a Plan without one SU deletes exactly that SU's objects.

Ownership: objects the cluster owns carry its tag (``clusterforge-<cluster>``) and are deleted when
no longer planned; shared objects (location, roles, manufacturers, device types and their templates,
the namespace) are created or updated but never deleted. Interfaces instantiated from device-type
templates belong to their device.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clusterforge.sot.client import NautobotClient, SotError
from clusterforge.sot.desired import Ref, Want

__all__ = ["Kind", "KINDS", "SyncReport", "push"]

_CHUNK = 50


@dataclass(frozen=True)
class Kind:
    endpoint: str
    key: Callable[[dict[str, Any]], tuple]  # natural key of an existing object (depth=1 JSON)
    owned: bool  # tagged with the cluster and deleted when no longer planned
    scope: str  # how existing objects are listed: name, model, tag, device, device_type, ip
    id_key: bool = False  # the key is made of resolved ids (join objects)


def _name(o: dict) -> tuple:
    return (o["name"],)


def _ends(o: dict) -> tuple:
    return tuple(sorted(str((o.get(f"termination_{side}") or {}).get("id")) for side in "ab"))


KINDS: dict[str, Kind] = {
    "tag": Kind("extras/tags/", _name, False, "name"),
    "location-type": Kind("dcim/location-types/", _name, False, "name"),
    "location": Kind("dcim/locations/", _name, False, "name"),
    "role": Kind("extras/roles/", _name, False, "name"),
    "manufacturer": Kind("dcim/manufacturers/", _name, False, "name"),
    "device-type": Kind("dcim/device-types/", lambda o: (o["manufacturer"]["name"], o["model"]), False, "model"),
    "interface-template": Kind("dcim/interface-templates/", lambda o: (o["device_type"]["id"], o["name"]), False,
                               "device_type", id_key=True),
    "power-port-template": Kind("dcim/power-port-templates/", lambda o: (o["device_type"]["id"], o["name"]), False,
                                "device_type", id_key=True),
    "power-outlet-template": Kind("dcim/power-outlet-templates/", lambda o: (o["device_type"]["id"], o["name"]),
                                  False, "device_type", id_key=True),
    # rack groups take no tags: the cluster owns those named <cluster>-su<NN>
    "rack-group": Kind("dcim/rack-groups/", _name, True, "prefix"),
    "rack": Kind("dcim/racks/", _name, True, "tag"),
    "device": Kind("dcim/devices/", _name, True, "tag"),
    "power-port": Kind("dcim/power-ports/", lambda o: (o["device"]["id"], o["name"]), False, "device", id_key=True),
    "interface": Kind("dcim/interfaces/", lambda o: (o["device"]["id"], o["name"]), True, "device", id_key=True),
    # cables are listed by the devices they touch (so an untagged twin is adopted, not duplicated)
    "cable": Kind("dcim/cables/", _ends, True, "cable", id_key=True),
    "namespace": Kind("ipam/namespaces/", _name, False, "name"),
    "prefix": Kind("ipam/prefixes/", lambda o: (o["prefix"],), True, "tag"),
    "ip-address": Kind("ipam/ip-addresses/", lambda o: (o["address"],), True, "tag"),
    "ip-assignment": Kind("ipam/ip-address-to-interface/", lambda o: (o["ip_address"]["id"], o["interface"]["id"]),
                          False, "ip", id_key=True),
    "power-panel": Kind("dcim/power-panels/", _name, True, "tag"),
    "power-feed": Kind("dcim/power-feeds/", lambda o: (o["power_panel"]["name"], o["name"]), True, "tag"),
    "power-cable": Kind("dcim/cables/", _ends, True, "cable", id_key=True),
}
# Natural keys of id-keyed kinds, from the Want's key, once the ids they name are known.
_ID_KEY: dict[str, Callable[[Want, Callable[[Ref], str]], tuple]] = {
    "interface-template": lambda w, r: (r(w.fields["device_type"]), w.fields["name"]),
    "power-port-template": lambda w, r: (r(w.fields["device_type"]), w.fields["name"]),
    "power-outlet-template": lambda w, r: (r(w.fields["device_type"]), w.fields["name"]),
    "interface": lambda w, r: (r(w.fields["device"]), w.fields["name"]),
    "cable": lambda w, r: tuple(sorted([r(w.fields["termination_a_id"]), r(w.fields["termination_b_id"])])),
    "power-cable": lambda w, r: tuple(sorted([r(w.fields["termination_a_id"]), r(w.fields["termination_b_id"])])),
    "ip-assignment": lambda w, r: (r(w.fields["ip_address"]), r(w.fields["interface"])),
}
_CABLE_KINDS = {"cable": "dcim.interface", "power-cable": "dcim.powerfeed"}


@dataclass
class SyncReport:
    created: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    updated: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    deleted: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    unchanged: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    changes: list[tuple[str, str, str]] = field(default_factory=list)  # (action, kind, natural key)
    calls: int = 0

    @property
    def changed(self) -> int:
        return sum(self.created.values()) + sum(self.updated.values()) + sum(self.deleted.values())

    def to_dict(self) -> dict[str, Any]:
        return {"created": dict(self.created), "updated": dict(self.updated), "deleted": dict(self.deleted),
                "unchanged": dict(self.unchanged), "changed": self.changed, "api_calls": self.calls}


def _norm(value: Any) -> Any:
    if isinstance(value, dict):
        if "id" in value:
            return str(value["id"])
        if "value" in value:
            return value["value"]
    if isinstance(value, list):
        return sorted(_norm(v) for v in value)
    if value == "":
        return None
    return value


class _Sync:
    def __init__(self, client: NautobotClient, tag: str) -> None:
        self.client = client
        self.tag = tag
        self.ids: dict[str, dict[tuple, str]] = defaultdict(dict)
        self.labels: dict[str, dict[tuple, str]] = defaultdict(dict)  # id-key -> natural key text
        self.existing: dict[str, dict[tuple, dict]] = {}
        self.report = SyncReport()

    def ref(self, ref: Ref) -> str:
        try:
            return self.ids[ref.kind][ref.key]
        except KeyError:
            raise SotError(f"{ref.kind} {'/'.join(map(str, ref.key))} is referenced but not on the server") from None

    def resolve(self, value: Any) -> Any:
        if isinstance(value, Ref):
            return self.ref(value)
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value

    def key_of(self, want: Want) -> tuple:
        return _ID_KEY[want.kind](want, self.ref) if KINDS[want.kind].id_key else want.key

    def _list(self, kind_name: str, wants: list[Want]) -> list[dict]:
        kind = KINDS[kind_name]
        if kind.scope == "prefix":
            prefix = self.tag.removeprefix("clusterforge-") + "-su"
            return [o for o in self.client.list(kind.endpoint, name__isw=prefix) if o["name"].startswith(prefix)]
        if kind.scope == "tag":
            return self.client.list(kind.endpoint, tags=self.tag)
        if kind.scope == "cable":
            # the cluster's tagged cables (a removed device leaves its cables behind) and every cable on a
            # planned device (an untagged twin of a planned cable is adopted, not duplicated)
            devices = sorted(set(self.ids["device"].values()))
            found = {o["id"]: o for o in self.client.list(kind.endpoint, tags=self.tag)}
            found |= {o["id"]: o for chunk in _chunked(devices)
                      for o in self.client.list(kind.endpoint, device_id=chunk)}
            return [o for o in found.values() if o.get("termination_a_type") == _CABLE_KINDS[kind_name]]
        if kind.scope in ("name", "model"):
            values = sorted({w.fields[kind.scope] for w in wants})
            return [o for chunk in _chunked(values) for o in self.client.list(kind.endpoint, **{kind.scope: chunk})]
        ids = sorted({self.ref(w.fields[{"device": "device", "device_type": "device_type", "ip": "ip_address"}[
            kind.scope]]) for w in wants})
        param = {"device": "device", "device_type": "device_type", "ip": "ip_address"}[kind.scope]
        return [o for chunk in _chunked(ids) for o in self.client.list(kind.endpoint, **{param: chunk})]

    def apply(self, kind_name: str, wants: list[Want]) -> None:
        kind = KINDS[kind_name]
        existing = {kind.key(o): o for o in self._list(kind_name, wants)}
        self.existing[kind_name] = existing
        if kind_name == "interface":  # every port of a planned device is a cable end, planned addresses or not
            device_names = {device_id: key for key, device_id in self.ids["device"].items()}
            for obj in existing.values():
                device = device_names.get(str(obj["device"]["id"]))
                if device:
                    self.ids["interface"][(device[0], obj["name"])] = str(obj["id"])
        creates: list[tuple[Want, tuple, dict]] = []
        updates: list[dict] = []
        for want in wants:
            key = self.key_of(want)
            self.labels[kind_name][key] = "/".join(map(str, want.key))
            fields = {k: self.resolve(v) for k, v in want.fields.items()}
            current = existing.get(key)
            if current is None:
                once = {k: ({"name": v} if k == "status" else self.resolve(v)) for k, v in want.once.items()}
                creates.append((want, key, {k: v for k, v in {**fields, **once}.items() if v is not None}))
                continue
            self.ids[kind_name][want.key] = str(current["id"])
            changed = {k: v for k, v in fields.items()
                       if not k.startswith("termination_") and _norm(current.get(k)) != _norm(v)}
            if changed:
                updates.append({"id": current["id"], **changed})
                self.report.updated[kind_name] += 1
                self.report.changes.append(("update", kind_name, self.labels[kind_name][key]))
            else:
                self.report.unchanged[kind_name] += 1
        if updates:
            self.client.update(kind.endpoint, updates)
        if creates:
            # cables trace their paths on save: small batches keep each request well inside the timeout
            made = self.client.create(kind.endpoint, [payload for _, _, payload in creates],
                                      chunk_size=20 if kind_name in _CABLE_KINDS else 200)
            if kind_name in _CABLE_KINDS:  # cable creation drops tags: set them afterwards
                self.client.update(kind.endpoint, [{"id": obj["id"], "tags": payload["tags"]}
                                                   for (_, _, payload), obj in zip(creates, made, strict=True)])
            for (want, key, _), obj in zip(creates, made, strict=True):
                self.ids[kind_name][want.key] = str(obj["id"])
                self.report.created[kind_name] += 1
                self.report.changes.append(("create", kind_name, self.labels[kind_name][key]))
        self.planned_keys = getattr(self, "planned_keys", {})
        self.planned_keys[kind_name] = {self.key_of(w) for w in wants}

    def lookup(self, kind_name: str, wants_keys: list[tuple]) -> None:
        """Read-only kinds (power ports of planned devices): ids for references."""
        kind = KINDS[kind_name]
        devices = sorted({self.ids["device"][(device,)] for device, _ in wants_keys if (device,) in self.ids["device"]})
        found = [o for chunk in _chunked(devices) for o in self.client.list(kind.endpoint, device=chunk)]
        by_id = {(o["device"]["id"], o["name"]): str(o["id"]) for o in found}
        for device, name in wants_keys:
            device_id = self.ids["device"].get((device,))
            if (device_id, name) in by_id:
                self.ids[kind_name][(device, name)] = by_id[(device_id, name)]

    def prune(self, order: list[str]) -> None:
        for kind_name in reversed(order):
            kind = KINDS[kind_name]
            if not kind.owned:
                continue
            existing = self.existing.get(kind_name, {})
            planned = self.planned_keys.get(kind_name, set())
            stale = [(key, o) for key, o in existing.items()
                     if key not in planned and (kind.scope == "prefix" or self._tagged(o))]
            if kind_name == "interface":
                stale = [(k, o) for k, o in stale if self._tagged(o)]  # template interfaces stay with the device
            if not stale:
                continue
            self.client.delete(kind.endpoint, [str(o["id"]) for _, o in stale])
            for key, o in stale:
                self.report.deleted[kind_name] += 1
                self.report.changes.append(("delete", kind_name, _display(kind_name, key, o)))

    def _tagged(self, obj: dict) -> bool:
        return any((t.get("name") if isinstance(t, dict) else None) == self.tag or
                   str(t.get("id") if isinstance(t, dict) else t) == self.ids["tag"].get((self.tag,))
                   for t in obj.get("tags") or [])


def _display(kind_name: str, key: tuple, obj: dict) -> str:
    if kind_name == "interface":
        return f"{obj['device'].get('name', obj['device']['id'])}/{obj['name']}"
    if KINDS[kind_name].id_key:
        return str(obj.get("display") or obj.get("label") or obj["id"])
    return "/".join(map(str, key))


def _chunked(values: list[str]) -> list[list[str]]:
    return [values[i:i + _CHUNK] for i in range(0, len(values), _CHUNK)]


def push(client: NautobotClient, wants: list[Want], tag: str) -> SyncReport:
    """Make the server hold exactly the Wants of this cluster."""
    sync = _Sync(client, tag)
    by_kind: dict[str, list[Want]] = defaultdict(list)
    order: list[str] = []
    for want in wants:
        if want.kind not in by_kind:
            order.append(want.kind)
        by_kind[want.kind].append(want)
    for kind_name in order:
        if kind_name == "power-cable":
            sync.lookup("power-port", [w.fields["termination_b_id"].key for w in by_kind[kind_name]])
        wants_of_kind = by_kind[kind_name]
        # references within the kind (a bond's members name the bond): referenced objects first
        later = [w for w in wants_of_kind if any(isinstance(v, Ref) and v.kind == kind_name for v in w.fields.values())]
        later_ids = {id(w) for w in later}
        first = [w for w in wants_of_kind if id(w) not in later_ids]
        sync.apply(kind_name, first)
        if later:
            planned = sync.planned_keys[kind_name]
            sync.apply(kind_name, later)
            sync.planned_keys[kind_name] |= planned
    for kind_name in KINDS:  # owned kinds with nothing planned any more still get pruned
        if KINDS[kind_name].owned and kind_name not in by_kind and KINDS[kind_name].scope in ("tag", "prefix", "cable"):
            sync.existing[kind_name] = {KINDS[kind_name].key(o): o for o in sync._list(kind_name, [])}
            order.append(kind_name)
    sync.prune(order)
    sync.report.calls = client.calls
    return sync.report
