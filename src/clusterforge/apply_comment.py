"""The pull-request comment of ci/clusterforge-apply.sh, written from its stacks' `up` runs:

    python3 -m clusterforge.apply_comment OUT_DIR INVENTORY REV

OUT_DIR holds what the script wrote: stacks.json (`clusterforge stacks --format json`: the stacks in apply
order), and per stack apply-<stack>.rc (the exit status; absent: not run, an earlier stack failed),
apply-<stack>.json (`up --format json`: what it changed, or that a later revision was applied already) and
apply-<stack>.err (its stderr: a queued wait for the lock says so there). comment.md is written there; its
first line is the marker ci/post-comment.sh finds the comment by, ``<!-- clusterforge-review-apply: INVENTORY
-->`` on one line, another comment than the review's. Every name from the repository passes
clusterforge.markup's escapes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from clusterforge import markup

__all__ = ["comment", "main"]

MAX_LINES = 30  # of a failed stack's stderr shown
OPS = ("create", "update", "replace", "delete")
QUEUE_WORDS = ("waiting for it", "took the lock after waiting", "is locked")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _stacks(out_dir: Path) -> list[list[str]]:
    try:
        doc = json.loads(_read(out_dir / "stacks.json"))
        return [[str(item["stack"]) for item in wave] for wave in doc["waves"]]
    except (ValueError, KeyError, TypeError):
        return []


def _changes(out_dir: Path, stack: str) -> str:
    try:
        doc: Any = json.loads(_read(out_dir / f"apply-{stack}.json"))
        if isinstance(doc.get("skipped"), dict):
            return (f"none: the stack is at {doc['skipped'].get('applied')}, a later revision that holds this"
                    " one")
        summary = doc["summary"]
        counts = {op: len(summary.get(op) or []) for op in OPS}
        same = int(summary.get("same") or 0)
    except (ValueError, KeyError, TypeError, AttributeError):
        return ""
    changed = ", ".join(f"{n} {op}d" if op != "replace" else f"{n} replaced" for op, n in counts.items() if n)
    return f"{changed or 'no changes'}, {same} unchanged"


def comment(out_dir: Path, inventory: str, rev: str) -> str:
    """The comment's Markdown: one row per stack (result, changes, the lock wait), then the failures' stderr."""
    waves = _stacks(out_dir)
    lines = [f"<!-- clusterforge-review-apply: {markup.comment(inventory)} -->",
             f"## clusterforge apply of {markup.code(inventory)} at {markup.code(rev)}", ""]
    if not waves:
        lines += ["The stacks could not be listed: the declaration did not load.", "",
                  *markup.fenced(_read(out_dir / "stacks.err").splitlines()[-MAX_LINES:])]
        return "\n".join(lines) + "\n"
    lines += ["| order | stack | result | changes | lock |", "|---|---|---|---|---|"]
    failed: list[str] = []
    for number, wave in enumerate(waves, 1):
        for stack in wave:
            rc_text = _read(out_dir / f"apply-{stack}.rc").strip()
            err = _read(out_dir / f"apply-{stack}.err").splitlines()
            waited = [line for line in err if "took the lock after waiting" in line]
            refused = any("is locked" in line for line in err)
            lock = (markup.text(waited[0].split(": ", 1)[-1]) if waited else
                    "**still held**" if refused else "taken at once" if rc_text else "")
            if not rc_text:
                result, changes = "not run (an earlier stack failed)", ""
            elif rc_text == "0":
                changes = markup.text(_changes(out_dir, stack))
                result = "up to date" if changes.startswith("none: ") else "applied"
            else:
                result, changes = f"**failed** (exit {markup.text(rc_text)})", ""
                failed.append(stack)
            lines.append(f"| {number} | {markup.code(stack, table=True)} | {result} | {changes} | {lock} |")
    for stack in failed:
        lines += ["", f"### {markup.code(stack)}",
                  *markup.fenced(_read(out_dir / f"apply-{stack}.err").splitlines()[-MAX_LINES:])]
    queued = [line for wave in waves for stack in wave for line in _read(out_dir / f"apply-{stack}.err").splitlines()
              if any(word in line for word in QUEUE_WORDS) and stack not in failed]
    if queued:
        lines += ["", "Queued behind another run:", *markup.fenced(queued[:MAX_LINES])]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python3 -m clusterforge.apply_comment OUT_DIR INVENTORY REV", file=sys.stderr)
        return 2
    out_dir, inventory, rev = argv
    out = Path(out_dir)
    (out / "comment.md").write_text(comment(out, inventory, rev), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
