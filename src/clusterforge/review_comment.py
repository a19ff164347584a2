"""The pull-request comment of ci/clusterforge-review.sh, written from its steps' outputs:

    python3 -m clusterforge.review_comment OUT_DIR INVENTORY BASE_REV VALIDATE DIFF PREVIEW

VALIDATE, DIFF and PREVIEW are each step's result (passed, failed or skipped). OUT_DIR holds what the steps
wrote (validate.err, diff.md, diff.err, preview.json, preview.err); comment.md is written there. Its first
line is the marker ci/post-comment.sh finds the comment by: ``<!-- clusterforge-review: INVENTORY -->``.
Every name from the pull request (the inventory's path, the base revision, file names in error lines) passes
clusterforge.markup's escapes, so none can close the marker, a code span or a fence, or add markup.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from clusterforge import markup

__all__ = ["comment", "main", "RESULTS"]

RESULTS = {"passed": "passed", "failed": "**failed**", "skipped": "skipped"}
MAX_LINES = 50  # of a step's stderr shown in the comment
MAX_URNS = 50  # replaced and deleted resources listed from the preview


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _preview(out_dir: Path) -> list[str]:
    try:
        doc = json.loads(_read(out_dir / "preview.json"))
    except ValueError:
        return ["the preview's JSON could not be read"]
    if not isinstance(doc, dict):
        return ["the preview's JSON is not an object"]
    lists: dict[str, list[Any]] = {op: v if isinstance(v := doc.get(op), list) else []
                                   for op in ("create", "update", "replace", "delete")}
    lines = [", ".join(f"{len(urns)} to {op}" for op, urns in lists.items()) + f", {doc.get('same', 0)} unchanged"]
    for op in ("replace", "delete"):
        lines += [f"- {op}: {markup.code(str(urn).rsplit('::', 1)[-1])}" for urn in lists[op][:MAX_URNS]]
    return [markup.text(lines[0]), *lines[1:]]


def comment(out_dir: Path, inventory: str, base: str, results: dict[str, str]) -> str:
    """The comment's Markdown; results maps validate, diff and preview to passed, failed or skipped."""
    shown = {step: RESULTS.get(result, markup.text(result)) for step, result in results.items()}
    lines = [f"<!-- clusterforge-review: {markup.comment(inventory)} -->",
             f"## clusterforge review of {markup.code(inventory)} against {markup.code(base)}", "",
             "| step | result |", "|---|---|",
             f"| validate | {shown['validate']} |", f"| diff (renumbering fails) | {shown['diff']} |",
             f"| preview | {shown['preview']} |", ""]
    validate_err = _read(out_dir / "validate.err").splitlines()[:MAX_LINES]
    if validate_err:
        lines += markup.fenced(validate_err)
    diff_md = _read(out_dir / "diff.md")
    if diff_md:
        lines.append(diff_md.rstrip("\n"))
    diff_err = _read(out_dir / "diff.err").splitlines()[:MAX_LINES]
    if diff_err:
        lines += ["", *markup.fenced(diff_err)]
    if (out_dir / "preview.json").is_file() and (out_dir / "preview.json").stat().st_size:
        lines += ["", "### preview", *_preview(out_dir)]
    elif results.get("preview") != "skipped":
        lines += ["", *markup.fenced(_read(out_dir / "preview.err").splitlines()[-MAX_LINES:])]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 6:
        print("usage: python3 -m clusterforge.review_comment OUT_DIR INVENTORY BASE_REV VALIDATE DIFF PREVIEW",
              file=sys.stderr)
        return 2
    out_dir, inventory, base, validate, diff, preview = argv
    out = Path(out_dir)
    (out / "comment.md").write_text(comment(out, inventory, base, {"validate": validate, "diff": diff,
                                                                   "preview": preview}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
