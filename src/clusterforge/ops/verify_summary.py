"""The host-check counts of an `up`: read from the Verification reports (<workDir>/verify/<group>.json)."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

__all__ = ["verify_lines"]


def verify_lines(work_dir: Path, since: _dt.datetime) -> list[str]:
    """One line per group checked at or after ``since`` (passed/failed/simulated/skipped, unreachable hosts)."""
    lines = []
    for report in sorted((work_dir / "verify").glob("*.json")):
        try:
            data = json.loads(report.read_text())
            finished = _dt.datetime.fromisoformat(data["finished"])
        except (OSError, ValueError, KeyError):
            continue
        if finished < since.replace(microsecond=0):
            continue
        totals = data.get("totals") or {}
        hosts = data.get("hosts") or {}
        lines.append(f"verify {report.stem}: {len(hosts)} host(s), {totals.get('passed', 0)} passed,"
                     f" {totals.get('failed', 0)} failed, {totals.get('simulated', 0)} simulated,"
                     f" {totals.get('skipped', 0)} skipped ({report})")
        for host, result in sorted(hosts.items()):
            if result.get("unreachable"):
                lines.append(f"  host {host} unreachable: {result['unreachable']}")
            elif result.get("failed"):
                lines.append(f"  host {host}: {result['failed']} check(s) failed")
    return lines
