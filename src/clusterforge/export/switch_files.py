"""The rendered switch files grouped by switch, for the exports that take each switch's files."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["by_switch"]


def by_switch(switch_files: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """{switch: {file: content}} from {"switches/<switch>/<file>": content}, each switch's files in the
    mapping's order. One pass: matching every device against every path was quadratic (at 512 SUs
    16,000 servers or 19,000 switches against 40,000 paths; most of `export containerlab`'s 215 s)."""
    grouped: dict[str, dict[str, str]] = {}
    for path, content in switch_files.items():
        top, _, rest = path.partition("/")
        name, slash, file = rest.partition("/")
        if top == "switches" and slash:
            grouped.setdefault(name, {})[file] = content
    return grouped
