"""Names are pure functions of stable ids (SU id, rack index, node slot, rail, ordinal)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "server_name", "su_label", "compute_rack", "network_rack", "site_rack", "pdu_name", "data_leaf", "spine_name",
    "su_spine_name", "core_name", "storage_leaf", "storage_spine", "mgmt_tor", "oob_tor", "agg_name",
    "storage_server", "control_node", "asset_id", "storage_pod_spine", "storage_core", "access_core", "site_access",
]


class RackMeta(NamedTuple):
    """The stable ids a rack was named from, carried beside its name (never parsed back out of it)."""

    su: int | None
    index: int  # type: ignore[assignment]  # shadows tuple.index on purpose. compute: rack in the SU; network: 100 + number; site: number
    role: str  # compute | network | site
    loc: tuple  # the declaration field a problem with this rack points at
    category: str | None = None  # site racks: spine, core, storage-spine, agg, storage, ...
    number: int | None = None  # network and site racks: the rack's number in its series


def su_label(su: int) -> str:
    """The SU part every SU-scoped name starts with: su01, su02, ... (su100 past 99)."""
    return f"su{su:02d}"


def compute_rack(su: int, rack: int) -> str:
    return f"su{su:02d}-r{rack:02d}"


def network_rack(su: int, index: int = 1) -> str:
    return f"su{su:02d}-rn{index}"


def site_rack(category: str, index: int) -> str:
    return f"site-{category}-r{index:02d}"


def pdu_name(rack: str, feed: str, pair: int = 1) -> str:
    """The first PDU of a side keeps the plain name (su01-r02-pdu-a); further ones are -pdu-a2, -pdu-a3..."""
    return f"{rack}-pdu-{feed.lower()}{pair if pair > 1 else ''}"


def server_name(su: int, rack: int, slot: int) -> str:
    return f"{compute_rack(su, rack)}-gpu{slot:02d}"


def data_leaf(su: int, rail: int, index: int, per_rail: int) -> str:
    base = f"su{su:02d}-leaf-rail{rail}"
    return base if per_rail == 1 else f"{base}-{index + 1}"


def spine_name(index: int) -> str:
    return f"spine-{index + 1:02d}"


def su_spine_name(su: int, index: int) -> str:
    return f"su{su:02d}-spine-{index + 1:02d}"


def core_name(index: int) -> str:
    return f"core-{index + 1:03d}"


def storage_leaf(su: int, index: int) -> str:
    return f"su{su:02d}-stor-leaf-{index + 1}"


def storage_spine(index: int) -> str:
    return f"stor-spine-{index + 1:02d}"


def storage_pod_spine(pod: int, index: int) -> str:
    """Three-tier storage: spine `index` of pod `pod` (0-based ids)."""
    return f"stor-pod{pod + 1:03d}-spine-{index + 1:02d}"


def storage_core(index: int) -> str:
    return f"stor-core-{index + 1:03d}"


def storage_server(index: int) -> str:
    return f"stor-{index + 1:03d}"


def control_node(index: int) -> str:
    return f"ctl-{index + 1:02d}"


def mgmt_tor(rack: str) -> str:
    return f"{rack}-mgmt"


def oob_tor(rack: str) -> str:
    return f"{rack}-oob"


def agg_name(plane: str, index: int) -> str:
    return f"{'mgmt' if plane == 'management' else plane}-agg-{index + 1}"


def access_core(plane: str, index: int) -> str:
    return f"{'mgmt' if plane == 'management' else plane}-core-{index + 1}"


def site_access(plane: str, index: int) -> str:
    """Site access switch `index` of a plane: the management and oob ports of the hosts in site racks."""
    return f"{'mgmt' if plane == 'management' else plane}-site-{index + 1}"


def asset_id(site: str, name: str) -> str:
    return f"{site}-{name}".upper()
