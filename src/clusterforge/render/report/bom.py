"""Bill of materials for people: plan.bom grouped by kind with subtotals, and the same lines as CSV."""

from __future__ import annotations

import csv
import io
from typing import Any

from clusterforge.plan.objects import Plan
from clusterforge.plan.records import BomLine
from clusterforge.render.csvcell import row

__all__ = ["BOM_COLUMNS", "KIND_ORDER", "bom_csv", "bom_view"]

BOM_COLUMNS = ["kind", "item", "count", "unit_price", "total"]
KIND_ORDER = ("server", "switch", "pdu", "cable", "optic")


def _kind_rank(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def bom_view(plan: Plan) -> dict[str, Any]:
    groups: dict[str, list[BomLine]] = {}
    for line in sorted(plan.bom.lines, key=lambda line: (_kind_rank(line.kind), line.item)):
        groups.setdefault(line.kind, []).append(line)
    total = plan.bom.hardware_total
    return {
        "groups": [{"kind": kind, "lines": lines, "subtotal": plan.bom.totals.get(kind, 0.0),
                    "share": plan.bom.totals.get(kind, 0.0) / total if total else 0.0}
                   for kind, lines in groups.items()],
        "total": total, "unpriced": list(plan.bom.unpriced),
    }


def bom_csv(plan: Plan) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(BOM_COLUMNS)
    for line in sorted(plan.bom.lines, key=lambda line: (_kind_rank(line.kind), line.item)):
        writer.writerow(row([line.kind, line.item, line.count, f"{line.unit_price:.2f}",
                             f"{line.total:.2f}"]))
    return buffer.getvalue()
