"""Bill of materials: devices by model, cables and optics by class, PDUs, with catalog prices."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from clusterforge.model import ClusterSpec
from clusterforge.plan.objects import Device, Link, Pdu
from clusterforge.plan.records import Bom, BomLine

__all__ = ["bill_of_materials"]


def bill_of_materials(spec: ClusterSpec, devices: list[Device], links: list[Link], pdus: list[Pdu],
                      extra: Iterable[tuple[str, str, int, float]] = ()) -> Bom:
    """`extra`: (kind, item, count, unit price) lines planned elsewhere (rack systems, CDUs, manifolds, leak
    detection)."""
    cat = spec.catalog
    models = Counter(d.model for d in devices)
    pdu_models = Counter(p.model for p in pdus)
    cables = Counter(f"{link.cable}-{link.speed_gbps}g" if link.cable != "cat6" else "cat6" for link in links)
    optics = Counter(f"transceiver-{link.speed_gbps}g" for link in links if link.cable == "fibre")
    lines: list[BomLine] = []
    missing: list[str] = []

    def line(kind: str, item: str, count: int, unit_price: float | None) -> None:
        if unit_price is None:
            missing.append(item)
        price = unit_price or 0.0
        lines.append(BomLine(kind, item, count, price, price * count))

    for model, count in sorted(models.items()):
        hardware = cat.servers.get(model) or cat.switches.get(model)
        line("server" if model in cat.servers else "switch", model, count, hardware.price if hardware else None)
    for model, count in sorted(pdu_models.items()):
        line("pdu", model, count, cat.pdus[model].price)
    for item, count in sorted(cables.items()):
        cable = cat.cables.get(item) or cat.cables.get(item.split("-")[0])
        line("cable", item, count, cable.price if cable else None)
    for item, count in sorted(optics.items()):
        optic = cat.cables.get(item) or cat.cables.get("transceiver")
        line("optic", item, 2 * count, optic.price if optic else None)
    for kind, item, count, unit_price in extra:
        line(kind, item, count, unit_price)
    totals: dict[str, float] = {}
    for entry in lines:
        totals[entry.kind] = totals.get(entry.kind, 0) + entry.total
    return Bom(tuple(lines), dict(totals), sum(totals.values()), tuple(missing),
               sum(c for m, c in models.items() if m in cat.switches), dict(cables), 2 * sum(optics.values()),
               sum(pdu_models.values()))
