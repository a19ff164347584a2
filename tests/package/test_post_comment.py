"""ci/post-comment.sh keeps one review comment per pull/merge request up to date, on GitHub and on GitLab.

No forge is reachable from here, so the forge side is a stand-in: a loopback HTTP server that answers the
calls the script makes as the forges document them. GitHub's REST API (issue comments of a pull request):
list `GET /repos/{owner}/{repo}/issues/{number}/comments` (`per_page`, `page`), create `POST` there, update
`PATCH /repos/{owner}/{repo}/issues/comments/{id}`, a bearer token, a JSON `body`. GitLab's Notes API (merge
request notes): list `GET /projects/{id}/merge_requests/{iid}/notes` (`sort`, `per_page`, `page`), create
`POST` there, update `PUT .../notes/{note_id}`, the PRIVATE-TOKEN header, a JSON `body`. What is tested is
the script: the first run creates the comment, the next finds it by the review marker (also past the first
page of comments) and updates it in place, never adding a second; other comments are left alone; a body with
shell and JSON metacharacters arrives unchanged; a refused token fails the step; a file without the marker is
refused before any call."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from forge_standin import FORGES, TOKEN, Thread, serving

ROOT = Path(__file__).resolve().parents[2]
POST = ROOT / "ci" / "post-comment.sh"
MARKER = "<!-- clusterforge-review inventory/lab.yaml -->"


@pytest.fixture(params=sorted(FORGES))
def forge(request):
    thread = Thread(FORGES[request.param], comments=[{"id": 100 + i, "body": f"comment {i}"} for i in range(3)])
    with serving(thread) as base:
        yield thread, base


def _post(thread: Thread, base: str, comment: Path, token: str = TOKEN) -> subprocess.CompletedProcess:
    if shutil.which("curl") is None:
        pytest.fail("curl is not installed (ci/post-comment.sh needs it)")
    env = {**os.environ, **thread.forge.env, "GITHUB_API_URL": base, "CI_API_V4_URL": f"{base}/api/v4"}
    env = {k: (token if v == TOKEN else v) for k, v in env.items()}
    return subprocess.run(["bash", str(POST), thread.forge.name, str(comment)], env=env, capture_output=True,
                          text=True, timeout=60)


def test_the_review_comment_is_created_once_then_updated_in_place(forge, tmp_path: Path) -> None:
    thread, base = forge
    comment = tmp_path / "comment.md"
    first = f"{MARKER}\n## clusterforge: 3 changes\n"
    comment.write_text(first)
    done = _post(thread, base, comment)
    assert done.returncode == 0, done.stderr
    assert [c["body"] for c in thread.comments] == ["comment 0", "comment 1", "comment 2", first]

    second = f"{MARKER}\n## 1 change & 'quotes' \"json\" \\n $HOME `x` a=b+c%20 é\n"
    comment.write_text(second)
    done = _post(thread, base, comment)
    assert done.returncode == 0, done.stderr
    assert [c["body"] for c in thread.comments] == ["comment 0", "comment 1", "comment 2", second]
    assert [c[0] for c in thread.calls] == ["GET", "GET", "POST", "GET", thread.forge.update_method]
    assert thread.calls[-1][1] == f"{thread.forge.update_prefix}{thread.comments[3]['id']}"


def test_the_marker_is_found_past_the_first_page(forge, tmp_path: Path) -> None:
    thread, base = forge
    thread.comments[:] = [{"id": 100 + i, "body": f"comment {i}"} for i in range(150)]
    thread.comments.insert(120, {"id": 9999, "body": f"{MARKER}\nold\n"})
    comment = tmp_path / "comment.md"
    comment.write_text(f"{MARKER}\nnew\n")
    done = _post(thread, base, comment)
    assert done.returncode == 0, done.stderr
    assert len(thread.comments) == 151
    assert thread.comments[120]["body"] == f"{MARKER}\nnew\n"
    assert [c[0] for c in thread.calls] == ["GET", "GET", thread.forge.update_method]


def test_a_refused_token_fails_the_step(forge, tmp_path: Path) -> None:
    thread, base = forge
    comment = tmp_path / "comment.md"
    comment.write_text(f"{MARKER}\nbody\n")
    done = _post(thread, base, comment, token="wrong")
    assert done.returncode != 0
    assert "401" in done.stderr
    assert "wrong" not in done.stderr
    assert len(thread.comments) == 3


def test_a_file_without_the_marker_is_refused_before_any_call(forge, tmp_path: Path) -> None:
    thread, base = forge
    comment = tmp_path / "comment.md"
    comment.write_text("## not a review comment\n")
    done = _post(thread, base, comment)
    assert done.returncode == 2
    assert "marker" in done.stderr
    assert thread.calls == []
