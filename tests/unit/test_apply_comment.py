"""clusterforge.apply_comment: the merged pull request's comment from ci/clusterforge-apply.sh's files, one row per
stack in apply order (applied, up to date, failed, not run), the lock wait shown, names escaped."""

from __future__ import annotations

import json
from pathlib import Path

from clusterforge.apply_comment import comment, main


def _write(out: Path, stack: str, rc: int | None, doc: dict | None = None, err: str = "") -> None:
    if rc is not None:
        (out / f"apply-{stack}.rc").write_text(f"{rc}\n")
    if doc is not None:
        (out / f"apply-{stack}.json").write_text(json.dumps(doc))
    (out / f"apply-{stack}.err").write_text(err)


def test_one_row_per_stack_in_order_with_the_wait_and_the_failure(tmp_path: Path) -> None:
    waves = [[{"stack": "lab-site", "part": "site"}], [{"stack": "lab-su01", "part": "su01"},
                                                       {"stack": "lab-su02", "part": "su02"}],
             [{"stack": "lab-services", "part": "services"}]]
    (tmp_path / "stacks.json").write_text(json.dumps({"split": "su", "base": "lab", "waves": waves}))
    _write(tmp_path, "lab-site", 0, {"stack": "lab-site", "summary": {"create": [], "update": ["u"], "replace": [],
                                                                      "delete": [], "same": 40}},
           "stack lab-site is locked: `up` by ci@r1 (pid 7); waiting for it, up to 1800 s in all (queued)\n"
           "stack lab-site: took the lock after waiting 42 s\n")
    _write(tmp_path, "lab-su01", 0, {"stack": "lab-su01", "skipped": {"revision": "a1", "applied": "b2"}})
    _write(tmp_path, "lab-su02", 1, None, "error: the engine run failed <script>x</script>\n")
    text = comment(tmp_path, "inventory/<b>lab</b>.yaml", "abc")
    lines = text.splitlines()
    # the marker ci/post-comment.sh finds the comment by: the name cannot close it; another than the review's
    assert lines[0] == "<!-- clusterforge-review-apply: inventory/%3Cb%3Elab%3C/b%3E.yaml -->"
    assert lines[1] == "## clusterforge apply of `inventory/<b>lab</b>.yaml` at `abc`"  # a code span: literal
    assert "| 1 | `lab-site` | applied | 1 updated, 40 unchanged | took the lock after waiting 42 s |" in text
    assert "| 2 | `lab-su01` | up to date | none: the stack is at b2, a later revision that holds this one |" in text
    assert "| 2 | `lab-su02` | **failed** (exit 1) |" in text
    assert "| 3 | `lab-services` | not run (an earlier stack failed) |" in text
    assert "```\nerror: the engine run failed <script>x</script>\n```" in text  # in a fence: shown, not markup
    assert "Queued behind another run:" in text and "(queued)" in text


def test_stacks_that_could_not_be_listed_are_said(tmp_path: Path) -> None:
    (tmp_path / "stacks.err").write_text("inventory/lab.yaml:3:1: name: bad\n")
    assert main([str(tmp_path), "inventory/lab.yaml", "abc"]) == 0
    text = (tmp_path / "comment.md").read_text()
    assert "could not be listed" in text and "inventory/lab.yaml:3:1: name: bad" in text
    assert main([]) == 2
