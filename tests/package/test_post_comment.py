"""ci/post-comment.sh keeps one review comment per merge request up to date (its GitLab branch, through curl).

No forge is reachable from here, so the forge side is a stand-in: a loopback HTTP server that answers the three
calls of GitLab's REST API the script makes, as GitLab's "Notes API" documents them (list a merge request's
notes, create one, update one by id; the PRIVATE-TOKEN header; a form-encoded `body`). What is tested is the
script: the first run creates the note, the second finds it by the review marker and updates it in place
(never a second note), other notes are left alone, the token is sent, a body with shell and form metacharacters
arrives byte for byte, and a file without the marker is refused before any call. The GitHub branch (gh api) is
not run here: gh is not installed on this machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
POST = ROOT / "ci" / "post-comment.sh"
TOKEN = "glpat-test-token"  # the stand-in's own; not a secret of anything
NOTES = "/api/v4/projects/42/merge_requests/7/notes"


class _GitLabNotes(BaseHTTPRequestHandler):
    notes: list[dict]
    calls: list[tuple[str, str]]

    def log_message(self, *args: object) -> None:  # keep pytest's output clean
        pass

    def _reply(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        if self.headers.get("PRIVATE-TOKEN") != TOKEN:
            self._reply(401, {"message": "401 Unauthorized"})
            return False
        return True

    def _body(self) -> str:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        assert self.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded")
        return parse_qs(raw, keep_blank_values=True)["body"][0]

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        self.calls.append(("GET", url.path))
        if not self._authorised():
            return
        if url.path != NOTES:
            self._reply(404, {"message": "404 Not found"})
            return
        query = parse_qs(url.query)
        order = sorted(self.notes, key=lambda n: n["id"], reverse=query.get("sort") == ["desc"])
        self._reply(200, order[: int(query.get("per_page", ["20"])[0])])

    def do_POST(self) -> None:
        self.calls.append(("POST", self.path))
        if not self._authorised():
            return
        if self.path != NOTES:
            self._reply(404, {"message": "404 Not found"})
            return
        note = {"id": 1000 + len(self.notes), "body": self._body(), "system": False}
        self.notes.append(note)
        self._reply(201, note)

    def do_PUT(self) -> None:
        self.calls.append(("PUT", self.path))
        if not self._authorised():
            return
        head, _, note_id = self.path.rpartition("/")
        found = [n for n in self.notes if head == NOTES and str(n["id"]) == note_id]
        if not found:
            self._reply(404, {"message": "404 Note Not Found"})
            return
        found[0]["body"] = self._body()
        self._reply(200, found[0])


@pytest.fixture()
def gitlab():
    handler = type("Handler", (_GitLabNotes,), {"notes": [{"id": 900, "body": "LGTM", "system": False}],
                                                  "calls": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield handler, f"http://127.0.0.1:{server.server_address[1]}/api/v4"
    finally:
        server.shutdown()
        server.server_close()


def _post(api: str, comment: Path, token: str = TOKEN) -> subprocess.CompletedProcess:
    if shutil.which("curl") is None:
        pytest.fail("curl is not installed (ci/post-comment.sh's GitLab branch needs it)")
    env = {**os.environ, "CLUSTERFORGE_GITLAB_TOKEN": token, "CI_API_V4_URL": api, "CI_PROJECT_ID": "42",
           "CI_MERGE_REQUEST_IID": "7"}
    return subprocess.run(["bash", str(POST), "gitlab", str(comment)], env=env, capture_output=True, text=True,
                          timeout=60)


def test_the_review_comment_is_created_once_then_updated_in_place(gitlab, tmp_path: Path) -> None:
    handler, api = gitlab
    comment = tmp_path / "comment.md"
    first = "<!-- clusterforge-review inventory/lab.yaml -->\n## clusterforge: 3 changes\n"
    comment.write_text(first)
    done = _post(api, comment)
    assert done.returncode == 0, done.stderr
    assert [n["body"] for n in handler.notes] == ["LGTM", first]

    second = ("<!-- clusterforge-review inventory/lab.yaml -->\n## clusterforge: 1 change & 'quotes' $HOME `x`"
              " a=b+c%20\n")
    comment.write_text(second)
    done = _post(api, comment)
    assert done.returncode == 0, done.stderr
    assert [n["body"] for n in handler.notes] == ["LGTM", second]  # updated, not added; the other note untouched
    assert [c[0] for c in handler.calls] == ["GET", "POST", "GET", "PUT"]
    assert handler.calls[-1][1] == f"{NOTES}/{handler.notes[1]['id']}"


def test_a_refused_token_fails_the_step(gitlab, tmp_path: Path) -> None:
    handler, api = gitlab
    comment = tmp_path / "comment.md"
    comment.write_text("<!-- clusterforge-review inventory/lab.yaml -->\nbody\n")
    done = _post(api, comment, token="wrong")
    assert done.returncode != 0
    assert "401" in done.stderr
    assert [n["body"] for n in handler.notes] == ["LGTM"]


def test_a_file_without_the_marker_is_refused_before_any_call(gitlab, tmp_path: Path) -> None:
    handler, api = gitlab
    comment = tmp_path / "comment.md"
    comment.write_text("## not a review comment\n")
    done = _post(api, comment)
    assert done.returncode == 2
    assert "marker" in done.stderr
    assert handler.calls == []
