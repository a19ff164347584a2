"""Compare two Plans (and, optionally, their rendered files): what a change to a declaration does.

Pure: Plans and {path: content} dicts in, a PlanDiff out; Markdown for a PR comment or a dict for JSON.

A renumbering is an error: an existing device (same name in both plans) whose rack, U, ASN or any
interface address changed. Stable identity promises that growth never does that, so when it happens
the change is either a mistake or needs a migration plan — never a silent side effect.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from clusterforge import markup
from clusterforge.plan.objects import Device, Link, Plan

__all__ = ["AddressChange", "FileChange", "FieldChange", "PlanDiff", "diff_plans", "to_dict", "to_markdown"]

SUMMARY_KEYS = ("gpus", "servers", "storage_servers", "switches", "racks", "pdus", "links", "power_kw")
SUMMARY_LABELS = {"storage_servers": "storage servers", "power_kw": "IT power (kW)", "hardware_total": "hardware"}
# device fields whose change moves or renumbers an existing device (addresses are checked per interface)
IDENTITY_FIELDS = ("rack", "ru", "asn")
DEVICE_FIELDS = ("kind", "model", "su", "height_u", "power_w", "weight_kg", "asset_id", "psu_feeds", "gpus",
                 "plane", "rail")
INTERFACE_FIELDS = ("plane", "mtu", "vlan", "gateway", "peer_ip", "rail", "members", "speed_gbps")
RACK_FIELDS = ("role", "power_w", "budget_w", "capacity_w", "cooling", "weight_kg", "used_u", "rack_u", "feeds",
               "pdus")
PDU_FIELDS = ("rack", "feed", "model", "capacity_w", "outlets", "outlets_used", "load_w")
MAX_LISTED = 60  # per list in Markdown; the JSON form is complete
MAX_DIFF_LINES = 40  # per changed file in Markdown
MAX_PATCHED_FILES = 12  # changed files whose patch is shown; a PR comment holds at most 65,536 characters


@dataclass(frozen=True)
class FieldChange:
    name: str  # device, rack, PDU or link
    field: str
    old: Any
    new: Any

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "field": self.field, "old": self.old, "new": self.new}


@dataclass(frozen=True)
class AddressChange:
    device: str
    interface: str
    old: str | None
    new: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "interface": self.interface, "old": self.old, "new": self.new}


@dataclass(frozen=True)
class FileChange:
    path: str
    added_lines: int
    removed_lines: int
    patch: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "added_lines": self.added_lines, "removed_lines": self.removed_lines}


@dataclass(frozen=True)
class PlanDiff:
    old_cluster: str
    new_cluster: str
    summary: tuple[tuple[str, Any, Any], ...]
    racks_added: tuple[str, ...] = ()
    racks_removed: tuple[str, ...] = ()
    racks_changed: tuple[FieldChange, ...] = ()
    devices_added: tuple[tuple[str, str, str], ...] = ()  # (name, kind, model)
    devices_removed: tuple[tuple[str, str, str], ...] = ()
    devices_changed: tuple[FieldChange, ...] = ()
    devices_grown: tuple[tuple[str, tuple[str, ...]], ...] = ()  # existing device, interfaces added
    pdus_added: tuple[str, ...] = ()
    pdus_removed: tuple[str, ...] = ()
    pdus_changed: tuple[FieldChange, ...] = ()
    links_added: tuple[str, ...] = ()
    links_removed: tuple[str, ...] = ()
    links_changed: tuple[FieldChange, ...] = ()
    links_added_by_tier: tuple[tuple[str, str, int], ...] = ()  # (plane, tier, count)
    links_removed_by_tier: tuple[tuple[str, str, int], ...] = ()
    addresses_added: tuple[AddressChange, ...] = ()
    addresses_removed: tuple[AddressChange, ...] = ()
    renumbered: tuple[FieldChange, ...] = ()  # the errors
    files_compared: bool = False
    files_added: tuple[str, ...] = ()
    files_removed: tuple[str, ...] = ()
    files_changed: tuple[FileChange, ...] = field(default_factory=tuple)

    @property
    def renumbered_devices(self) -> tuple[str, ...]:
        return tuple(sorted({change.name for change in self.renumbered}))

    @property
    def ok(self) -> bool:
        return not self.renumbered

    @property
    def empty(self) -> bool:
        return not any((self.racks_added, self.racks_removed, self.racks_changed, self.devices_added,
                        self.devices_removed, self.devices_changed, self.devices_grown, self.pdus_added,
                        self.pdus_removed, self.pdus_changed, self.links_added, self.links_removed,
                        self.links_changed, self.addresses_added, self.addresses_removed, self.renumbered,
                        self.files_added, self.files_removed, self.files_changed))


def _link_key(link: Link) -> str:
    return f"{link.a.device}:{link.a.port} — {link.b.device}:{link.b.port}"


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 1)
    return list(value) if isinstance(value, tuple) else value


def _fields(name: str, old: Any, new: Any, names: tuple[str, ...], prefix: str = "") -> list[FieldChange]:
    """Fields that differ; floats compare at 0.1 precision (watts, kilograms)."""
    return [FieldChange(name, prefix + key, _plain(getattr(old, key)), _plain(getattr(new, key)))
            for key in names if _plain(getattr(old, key)) != _plain(getattr(new, key))]


def _addresses(device: Device) -> dict[str, str | None]:
    return {iface.name: iface.ip for iface in device.interfaces}


def _compare_devices(old: Plan, new: Plan) -> dict[str, Any]:
    before = {d.name: d for d in old.devices}
    after = {d.name: d for d in new.devices}
    changed: list[FieldChange] = []
    renumbered: list[FieldChange] = []
    grown: list[tuple[str, tuple[str, ...]]] = []
    added_addresses: list[AddressChange] = []
    removed_addresses: list[AddressChange] = []
    for name in sorted(before.keys() & after.keys()):
        a, b = before[name], after[name]
        if a == b:
            continue
        changed += _fields(name, a, b, DEVICE_FIELDS)
        renumbered += _fields(name, a, b, IDENTITY_FIELDS)
        old_ips, new_ips = _addresses(a), _addresses(b)
        for iface in new_ips:  # the new device's interface order: deterministic
            if iface in old_ips and old_ips[iface] != new_ips[iface]:
                renumbered.append(FieldChange(name, f"interface {iface}", old_ips[iface], new_ips[iface]))
        new_ifaces = sorted(new_ips.keys() - old_ips.keys())
        if new_ifaces:
            grown.append((name, tuple(new_ifaces)))
        added_addresses += [AddressChange(name, iface, None, new_ips[iface]) for iface in new_ifaces
                            if new_ips[iface]]
        removed_addresses += [AddressChange(name, iface, old_ips[iface], None)
                              for iface in sorted(old_ips.keys() - new_ips.keys()) if old_ips[iface]]
        old_ifaces = {iface.name: iface for iface in a.interfaces}
        for interface in b.interfaces:
            if interface.name in old_ifaces:
                changed += _fields(name, old_ifaces[interface.name], interface, INTERFACE_FIELDS,
                                   f"{interface.name}.")
    for name in sorted(after.keys() - before.keys()):
        added_addresses += [AddressChange(name, iface.name, None, iface.ip) for iface in after[name].interfaces
                            if iface.ip]
    for name in sorted(before.keys() - after.keys()):
        removed_addresses += [AddressChange(name, iface.name, iface.ip, None) for iface in before[name].interfaces
                              if iface.ip]
    return {
        "devices_added": tuple((n, after[n].kind, after[n].model) for n in sorted(after.keys() - before.keys())),
        "devices_removed": tuple((n, before[n].kind, before[n].model) for n in sorted(before.keys() - after.keys())),
        "devices_changed": tuple(changed), "devices_grown": tuple(grown), "renumbered": renumbered,
        "addresses_added": tuple(added_addresses), "addresses_removed": tuple(removed_addresses),
    }


def _compare_pdus(old: Plan, new: Plan, renumbered: list[FieldChange]) -> dict[str, Any]:
    before = {p.name: p for p in old.pdus}
    after = {p.name: p for p in new.pdus}
    changed = []
    for name in sorted(before.keys() & after.keys()):
        changed += _fields(name, before[name], after[name], PDU_FIELDS)
        if before[name].ip != after[name].ip:
            renumbered.append(FieldChange(name, "address", before[name].ip, after[name].ip))
    return {"pdus_added": tuple(sorted(after.keys() - before.keys())),
            "pdus_removed": tuple(sorted(before.keys() - after.keys())), "pdus_changed": tuple(changed)}


def _compare_racks(old: Plan, new: Plan) -> dict[str, Any]:
    before = {r.name: r for r in old.racks}
    after = {r.name: r for r in new.racks}
    changed = []
    for name in sorted(before.keys() & after.keys()):
        changed += _fields(name, before[name], after[name], RACK_FIELDS)
    return {"racks_added": tuple(sorted(after.keys() - before.keys())),
            "racks_removed": tuple(sorted(before.keys() - after.keys())), "racks_changed": tuple(changed)}


def _compare_links(old: Plan, new: Plan) -> dict[str, Any]:
    before = {_link_key(link): link for link in old.links}
    after = {_link_key(link): link for link in new.links}
    changed = []
    for key in sorted(before.keys() & after.keys()):
        changed += _fields(key, before[key], after[key], ("plane", "speed_gbps", "mtu", "cable", "a_ip", "b_ip",
                                                           "tier"))
    added = sorted(after.keys() - before.keys())
    removed = sorted(before.keys() - after.keys())

    def by_tier(keys: list[str], links: dict[str, Link]) -> tuple[tuple[str, str, int], ...]:
        counts = Counter((links[key].plane, links[key].tier) for key in keys)
        return tuple((plane, tier, count) for (plane, tier), count in sorted(counts.items()))

    return {"links_added": tuple(added), "links_removed": tuple(removed), "links_changed": tuple(changed),
            "links_added_by_tier": by_tier(added, after), "links_removed_by_tier": by_tier(removed, before)}


def _compare_files(old: dict[str, str], new: dict[str, str]) -> dict[str, Any]:
    changed = []
    for path in sorted(old.keys() & new.keys()):
        if old[path] == new[path]:
            continue
        patch = list(difflib.unified_diff(old[path].splitlines(), new[path].splitlines(), f"a/{path}", f"b/{path}",
                                          lineterm="", n=1))
        plus = sum(1 for line in patch if line.startswith("+") and not line.startswith("+++"))
        minus = sum(1 for line in patch if line.startswith("-") and not line.startswith("---"))
        changed.append(FileChange(path, plus, minus, tuple(patch)))
    return {"files_compared": True, "files_added": tuple(sorted(new.keys() - old.keys())),
            "files_removed": tuple(sorted(old.keys() - new.keys())), "files_changed": tuple(changed)}


def diff_plans(old: Plan, new: Plan, old_files: dict[str, str] | None = None,
               new_files: dict[str, str] | None = None) -> PlanDiff:
    """Everything that differs between two plans; renumbered lists the errors."""
    summary = tuple((key, getattr(old.summary, key), getattr(new.summary, key)) for key in SUMMARY_KEYS)
    summary += (("hardware_total", round(old.bom.hardware_total), round(new.bom.hardware_total)),)
    devices = _compare_devices(old, new)
    renumbered: list[FieldChange] = devices.pop("renumbered")
    pdus = _compare_pdus(old, new, renumbered)
    files = _compare_files(old_files, new_files) if old_files is not None and new_files is not None else {}
    return PlanDiff(old.cluster, new.cluster, summary, **_compare_racks(old, new), **devices, **pdus,
                    **_compare_links(old, new), renumbered=tuple(renumbered), **files)


def to_dict(diff: PlanDiff) -> dict[str, Any]:
    def changes(items) -> list[dict[str, Any]]:
        return [item.to_dict() for item in items]

    out: dict[str, Any] = {
        "old": diff.old_cluster, "new": diff.new_cluster, "ok": diff.ok,
        "errors": [f"{c.name}: {c.field} {c.old} -> {c.new}" for c in diff.renumbered],
        "summary": {key: {"old": old, "new": new} for key, old, new in diff.summary},
        "racks": {"added": list(diff.racks_added), "removed": list(diff.racks_removed),
                  "changed": changes(diff.racks_changed)},
        "devices": {"added": [{"name": n, "kind": k, "model": m} for n, k, m in diff.devices_added],
                    "removed": [{"name": n, "kind": k, "model": m} for n, k, m in diff.devices_removed],
                    "changed": changes(diff.devices_changed),
                    "grown": [{"name": n, "interfaces_added": list(i)} for n, i in diff.devices_grown],
                    "renumbered": changes(diff.renumbered)},
        "pdus": {"added": list(diff.pdus_added), "removed": list(diff.pdus_removed),
                 "changed": changes(diff.pdus_changed)},
        "links": {"added": list(diff.links_added), "removed": list(diff.links_removed),
                  "changed": changes(diff.links_changed)},
        "addresses": {"added": changes(diff.addresses_added), "removed": changes(diff.addresses_removed)},
    }
    if diff.files_compared:
        out["files"] = {"added": list(diff.files_added), "removed": list(diff.files_removed),
                        "changed": changes(diff.files_changed)}
    return out


def _listed(items: list[str], limit: int = MAX_LISTED, table: bool = False) -> list[str]:
    shown = items[:limit]
    if len(items) > limit:
        more = f"… and {len(items) - limit:,} more (see `--format json`)"
        shown.append(f"| {more} |" if table else f"- {more}")
    return shown


def _details(title: str, lines: list[str]) -> list[str]:
    """A collapsible section; title is HTML (the caller escapes what it puts in)."""
    return ["<details>", f"<summary>{title}</summary>", "", *lines, "", "</details>", ""]


def _delta(old: Any, new: Any) -> str:
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        delta = new - old
        if not delta:
            return ""
        return f"{delta:+,.2f}".rstrip("0").rstrip(".") if isinstance(delta, float) else f"{delta:+,}"
    return "" if old == new else "changed"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int):
        return f"{value:,}"
    return "—" if value is None else str(value)


def _change_table(what: str, changes: tuple[FieldChange, ...], code: bool = False) -> list[str]:
    value = (lambda v: markup.code(_fmt(v), table=True)) if code else (lambda v: markup.text(_fmt(v)))
    rows = [f"| {markup.code(c.name, table=True)} | {markup.text(c.field)} | {value(c.old)} | {value(c.new)} |"
            for c in changes]
    return [f"| {what} | field | old | new |", "|---|---|---|---|", *_listed(rows, table=True), ""]


def _address_table(changes: tuple[AddressChange, ...], side: str) -> list[str]:
    rows = [f"| {markup.code(a.device, table=True)} | {markup.text(a.interface)} |"
            f" {markup.code(getattr(a, side), table=True)} |" for a in changes]
    return ["| device | interface | address |", "|---|---|---|", *_listed(rows, table=True)]


def _verdict(diff: PlanDiff, old_label: str | None, new_label: str | None) -> list[str]:
    """The title, the verdict and the counts table."""
    out = [f"## clusterforge diff: {markup.code(old_label or diff.old_cluster)} →"
           f" {markup.code(new_label or diff.new_cluster)}", ""]
    if diff.renumbered:
        out += ["> [!CAUTION]",
                f"> **ERROR: {len(diff.renumbered_devices)} existing device(s) renumbered or moved.** Addresses,"
                " racks and U positions of existing devices must not change; this plan would re-address"
                " running hardware.", ""]
    elif diff.empty:
        out += ["No change: both declarations plan the same cluster.", ""]
    else:
        out += ["**OK:** no existing device is renumbered or moved.", ""]
    out += ["| | old | new | Δ |", "|---|---:|---:|---:|"]
    for key, old, new in diff.summary:
        out.append(f"| {markup.text(SUMMARY_LABELS.get(key, key))} | {markup.text(_fmt(old))} |"
                   f" {markup.text(_fmt(new))} | {_delta(old, new)} |")
    out.append("")
    return out


def _racks_and_devices(diff: PlanDiff) -> list[str]:
    out: list[str] = []
    if diff.renumbered:
        out += ["### ❌ Renumbered or moved (errors)", "", *_change_table("device", diff.renumbered, code=True)]
    out += [f"### Racks: +{len(diff.racks_added)} −{len(diff.racks_removed)}"
            f" ~{len({c.name for c in diff.racks_changed})}", ""]
    if diff.racks_added:
        out += ["Added: " + ", ".join(markup.code(name) for name in diff.racks_added), ""]
    if diff.racks_removed:
        out += ["Removed: " + ", ".join(markup.code(name) for name in diff.racks_removed), ""]
    if diff.racks_changed:
        out += _change_table("rack", diff.racks_changed)
    out += [f"### Devices: +{len(diff.devices_added)} −{len(diff.devices_removed)}"
            f" ~{len({c.name for c in diff.devices_changed})}", ""]
    for title, items in (("Added", diff.devices_added), ("Removed", diff.devices_removed)):
        if items:
            kinds = Counter((kind, model) for _, kind, model in items)
            summary = ", ".join(f"{count} × {kind} {model}" for (kind, model), count in sorted(kinds.items()))
            out += _details(markup.html(f"{title} ({len(items)}): {summary}"),
                            _listed([f"- {markup.code(name)} ({markup.text(kind)}, {markup.text(model)})"
                                     for name, kind, model in items]))
    if diff.devices_changed:
        out += _change_table("device", diff.devices_changed)
    if diff.devices_grown:
        out += _details(f"Existing devices with new interfaces only (additive): {len(diff.devices_grown)}",
                        _listed([f"- {markup.code(name)}: +{len(ifaces)} ({markup.text(', '.join(ifaces))})"
                                 for name, ifaces in diff.devices_grown]))
    if diff.pdus_added or diff.pdus_removed or diff.pdus_changed:
        out += [f"### PDUs: +{len(diff.pdus_added)} −{len(diff.pdus_removed)}"
                f" ~{len({c.name for c in diff.pdus_changed})}", ""]
        if diff.pdus_added:
            out += _details(f"Added ({len(diff.pdus_added)})",
                            _listed([f"- {markup.code(n)}" for n in diff.pdus_added]))
        if diff.pdus_removed:
            out += _details(f"Removed ({len(diff.pdus_removed)})",
                            _listed([f"- {markup.code(n)}" for n in diff.pdus_removed]))
        if diff.pdus_changed:
            out += _change_table("PDU", diff.pdus_changed)
    return out


def _links_and_addresses(diff: PlanDiff) -> list[str]:
    out = [f"### Links: +{len(diff.links_added)} −{len(diff.links_removed)} ~{len(diff.links_changed)}", ""]
    tiers = [(plane, tier, count, "+") for plane, tier, count in diff.links_added_by_tier]
    tiers += [(plane, tier, count, "−") for plane, tier, count in diff.links_removed_by_tier]
    if tiers:
        out += ["| plane | tier | links |", "|---|---|---:|"]
        out += [f"| {markup.text(plane)} | {markup.text(tier)} | {sign}{count:,} |"
                for plane, tier, count, sign in tiers]
        out.append("")
    if diff.links_added:
        out += _details(f"Added links ({len(diff.links_added)})",
                        _listed([f"- {markup.text(key)}" for key in diff.links_added]))
    if diff.links_removed:
        out += _details(f"Removed links ({len(diff.links_removed)})",
                        _listed([f"- {markup.text(key)}" for key in diff.links_removed]))
    if diff.links_changed:
        out += _change_table("link", diff.links_changed)
    out += [f"### Addresses: +{len(diff.addresses_added)} −{len(diff.addresses_removed)}"
            f" renumbered {len(diff.renumbered)}", ""]
    if diff.addresses_added:
        out += _details(f"Assigned ({len(diff.addresses_added)})", _address_table(diff.addresses_added, "new"))
    if diff.addresses_removed:
        out += _details(f"Released ({len(diff.addresses_removed)})", _address_table(diff.addresses_removed, "old"))
    return out


def _rendered_files(diff: PlanDiff) -> list[str]:
    if not diff.files_compared:
        return []
    out = [f"### Rendered files: +{len(diff.files_added)} −{len(diff.files_removed)}"
           f" ~{len(diff.files_changed)}", ""]
    rows = [f"| {markup.code(path, table=True)} | added | |" for path in diff.files_added]
    rows += [f"| {markup.code(path, table=True)} | removed | |" for path in diff.files_removed]
    rows += [f"| {markup.code(f.path, table=True)} | changed | +{f.added_lines} −{f.removed_lines} |"
             for f in diff.files_changed]
    if rows:
        out += ["| file | change | lines |", "|---|---|---:|", *_listed(rows, table=True), ""]
    for change in diff.files_changed[:MAX_PATCHED_FILES]:
        patch = list(change.patch[:MAX_DIFF_LINES])
        if len(change.patch) > MAX_DIFF_LINES:
            patch.append(f"… {len(change.patch) - MAX_DIFF_LINES} more lines")
        out += _details(f"<code>{markup.html(change.path)}</code>", markup.fenced(patch, "diff"))
    return out


def to_markdown(diff: PlanDiff, old_label: str | None = None, new_label: str | None = None) -> str:
    """A PR comment: verdict first, then counts, then collapsible details."""
    out = _verdict(diff, old_label, new_label)
    if not diff.empty:
        out += [*_racks_and_devices(diff), *_links_and_addresses(diff), *_rendered_files(diff)]
    return "\n".join(out).rstrip() + "\n"
