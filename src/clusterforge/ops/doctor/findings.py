"""A doctor finding: which check, how it came out, the evidence read from the host, and the fix."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from enum import Enum

__all__ = ["Finding", "Status", "render", "to_json"]


class Status(str, Enum):
    ok = "ok"
    warn = "warn"
    fail = "fail"
    skip = "skip"  # the check does not apply here (no GPU, no InfiniBand): the reason is the evidence


@dataclass(frozen=True)
class Finding:
    check: str
    status: Status
    summary: str
    evidence: str = ""
    fix: str = ""


def render(host: str, findings: list[Finding]) -> str:
    count = {s: sum(f.status is s for f in findings) for s in Status}
    lines = [f"doctor {host}: {count[Status.fail]} fail, {count[Status.warn]} warn, {count[Status.ok]} ok,"
             f" {count[Status.skip]} skipped"]
    for f in findings:
        lines.append(f"{f.status.value.upper():<4} {f.check}: {f.summary}")
        for label, text in (("evidence", f.evidence), ("fix", f.fix)):
            for i, line in enumerate(text.strip().splitlines()[:12]):
                lines.append(f"       {label + ':' if i == 0 else ' ' * (len(label) + 1)} {line}")
    return "\n".join(lines)


def to_json(host: str, findings: list[Finding]) -> str:
    return json.dumps({"host": host, "findings": [{**asdict(f), "status": f.status.value} for f in findings]},
                      indent=1)
