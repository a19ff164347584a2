#!/usr/bin/env python3
"""Copy each role's defaults (roles/*/defaults/main.yml) into its meta/argument_specs.yml as ``default:``.

ansible-doc shows an option's default only from the argument spec (the role's real default always comes
from defaults/main.yml); without this every option reads ``default: null``. The spec file is edited as
text (a ``default:`` line after the option's ``type:``), so its comments and wrapping stay as written.
Run after changing a role's defaults; tests/unit/test_role_argument_specs.py fails while they disagree.

    scripts/sync-argument-specs.py [--check]
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]


def _dump(key: str, value: object, indent: int) -> list[str]:
    yaml = YAML()
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    yaml.dump({key: value}, out)
    return [" " * indent + line for line in out.getvalue().splitlines()]


def _missing(spec_text: str, defaults: dict) -> dict[str, object]:
    """Options of the spec that have a role default but no (or a different) ``default:``."""
    spec = YAML(typ="safe").load(spec_text)
    wanted: dict[str, object] = {}
    for entry in spec["argument_specs"].values():
        for name, option in (entry.get("options") or {}).items():
            if name in defaults and not option.get("required") and option.get("default", ...) != defaults[name]:
                wanted[name] = defaults[name]
    return wanted


def synced(spec_text: str, defaults: dict) -> str:
    """``spec_text`` with a ``default:`` for every top-level option that has a role default."""
    wanted = _missing(spec_text, defaults)
    if not wanted:
        return spec_text
    lines = spec_text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        head = re.fullmatch(r"( *)([a-z_][a-z0-9_]*):\s*", line)
        i += 1
        if not head or head.group(2) not in wanted:
            continue
        child = len(head.group(1)) + 2
        block: list[str] = []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) >= child):
            block.append(lines[i])
            i += 1
        keyed = [n for n, b in enumerate(block) if re.match(rf" {{{child}}}[a-z_]+:", b)]
        own = [n for n in keyed if re.match(rf" {{{child}}}default:", block[n])]
        for n in reversed(own):  # drop a stale default (and its continuation lines)
            end = next((k for k in keyed if k > n), len(block))
            del block[n:end]
        keyed = [n for n, b in enumerate(block) if re.match(rf" {{{child}}}[a-z_]+:", b)]
        typed = [n for n in keyed if re.match(rf" {{{child}}}type:", block[n])]
        at = (next((k for k in keyed if k > typed[0]), len(block)) if typed else 0)
        block[at:at] = _dump("default", wanted[head.group(2)], child)
        out.extend(block)
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for role in sorted(p for p in (ROOT / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file()):
        spec_path = role / "meta" / "argument_specs.yml"
        defaults = YAML(typ="safe").load((role / "defaults" / "main.yml").read_text()) or {}
        before = spec_path.read_text()
        after = synced(before, defaults)
        if after != before:
            stale.append(role.name)
            if not check:
                spec_path.write_text(after)
                print(f"sync-argument-specs: {role.name}: defaults written")
    if check and stale:
        print(f"sync-argument-specs: out of date: {', '.join(stale)} (run scripts/sync-argument-specs.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
