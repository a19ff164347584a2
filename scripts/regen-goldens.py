#!/usr/bin/env python3
"""Regenerate the switch-config golden files under tests/fabric/golden/ from the current code.

    .venv/bin/python scripts/regen-goldens.py            # all cases
    .venv/bin/python scripts/regen-goldens.py lab        # some cases
    .venv/bin/python scripts/regen-goldens.py --check    # exit 1 if any golden is stale

Review the result as a diff (`git diff tests/fabric/golden`) before committing: a golden change
is a change to what goes onto switches.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "fabric"))

from golden_cases import CASES, GOLDEN_DIR, golden_files, rendered  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", choices=[[], *CASES], help="cases to regenerate (default: all)")
    parser.add_argument("--check", action="store_true", help="only report stale goldens; write nothing")
    args = parser.parse_args(argv)
    stale = 0
    for name in args.cases or list(CASES):
        want, have = rendered(name), golden_files(name)
        added = sorted(set(want) - set(have))
        removed = sorted(set(have) - set(want))
        changed = sorted(p for p in set(want) & set(have) if want[p] != have[p])
        stale += len(added) + len(removed) + len(changed)
        for label, paths in (("+", added), ("-", removed), ("~", changed)):
            for path in paths:
                print(f"{label} {name}/{path}")
        if args.check:
            continue
        root = GOLDEN_DIR / name
        for path in removed:
            (root / path).unlink()
        for path in added + changed:
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(want[path])
        for directory in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
            if not any(directory.iterdir()):
                directory.rmdir()
        print(f"{name}: {len(want)} files, {len(added)} added, {len(changed)} changed, {len(removed)} removed")
    if args.check and stale:
        print(f"{stale} golden files are stale; run scripts/regen-goldens.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
