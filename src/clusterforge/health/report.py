"""The health report: the JSON document, the table's lines and the exit code by the worst verdict.

Exit codes (the command line's rules): 0 every node PASS; 1 the worst verdict is WARN or CRITICAL (the
cluster is wrong); 3 the worst is UNKNOWN (a check could not run: the environment).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clusterforge.health.evidence import Status
from clusterforge.health.ladder import NodeHealth, Verdict, worst

__all__ = ["EXIT_CODES", "SCHEMA", "document", "exit_code", "lines"]

SCHEMA = "clusterforge.health/1"
EXIT_CODES = {Verdict.PASS: 0, Verdict.WARN: 1, Verdict.CRITICAL: 1, Verdict.UNKNOWN: 3}


def document(nodes: Sequence[NodeHealth]) -> dict[str, Any]:
    return {"schema": SCHEMA, "worst": worst(n.verdict for n in nodes).value, "nodes": [n.to_dict() for n in nodes]}


def exit_code(nodes: Sequence[NodeHealth]) -> int:
    return EXIT_CODES[worst(n.verdict for n in nodes)]


def lines(nodes: Sequence[NodeHealth], all_evidence: bool = False) -> list[str]:
    """One line per node, then the evidence that makes its verdict (every evidence with `all_evidence`)."""
    out = []
    for node in nodes:
        mark = " (SIMULATED fault)" if node.simulated else ""
        out.append(f"{node.verdict.value:<8} {node.name}: action {node.action.value}{mark}")
        for e in node.evidence:
            if all_evidence or e.status in (Status.warn, Status.fail, Status.unknown):
                out.append(f"         {e.status.value:<7} {e.check}: {e.summary}"
                           + (f" -> {e.action.value}" if e.action.value != "none" else "")
                           + (" [SIMULATED]" if e.simulated else ""))
    counts = {v: sum(n.verdict is v for n in nodes) for v in Verdict}
    out.append(f"health: {len(nodes)} node(s): " + ", ".join(f"{counts[v]} {v.value}" for v in Verdict))
    return out
