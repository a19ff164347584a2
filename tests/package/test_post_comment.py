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

import json
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
POST = ROOT / "ci" / "post-comment.sh"
TOKEN = "stand-in-token"  # the stand-in's own; not a secret of anything
MARKER = "<!-- clusterforge-review inventory/lab.yaml -->"


@dataclass(frozen=True)
class Forge:
    name: str
    list_path: str  # where comments are listed and created
    update_prefix: str  # + id: where one is updated
    update_method: str
    auth_header: str
    auth_value: str
    env: dict[str, str]


FORGES = {
    "github": Forge("github", "/repos/acme/infra/issues/7/comments", "/repos/acme/infra/issues/comments/", "PATCH",
                    "Authorization", f"Bearer {TOKEN}",
                    {"GH_TOKEN": TOKEN, "GITHUB_REPOSITORY": "acme/infra", "PR_NUMBER": "7"}),
    "gitlab": Forge("gitlab", "/api/v4/projects/42/merge_requests/7/notes",
                    "/api/v4/projects/42/merge_requests/7/notes/", "PUT", "PRIVATE-TOKEN", TOKEN,
                    {"CLUSTERFORGE_GITLAB_TOKEN": TOKEN, "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "7"}),
}


@dataclass
class Thread:
    """The stand-in's state: the comments of one pull/merge request and every call the script made."""

    forge: Forge
    comments: list[dict] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)


def _handler(thread: Thread) -> type[BaseHTTPRequestHandler]:
    forge = thread.forge

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep pytest's output clean
            pass

        def _reply(self, status: int, payload: object) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _admitted(self) -> bool:
            url = urlsplit(self.path)
            thread.calls.append((self.command, url.path))
            if self.headers.get(forge.auth_header) != forge.auth_value:
                self._reply(401, {"message": "Bad credentials"})
                return False
            return True

        def _body(self) -> str:
            assert self.headers.get("Content-Type") == "application/json"
            return json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))["body"]

        def do_GET(self) -> None:
            if not self._admitted():
                return
            url = urlsplit(self.path)
            if url.path != forge.list_path:
                self._reply(404, {"message": "Not Found"})
                return
            query = parse_qs(url.query)
            per_page, page = int(query.get("per_page", ["30"])[0]), int(query.get("page", ["1"])[0])
            self._reply(200, thread.comments[(page - 1) * per_page: page * per_page])

        def do_POST(self) -> None:
            if not self._admitted():
                return
            if self.path != forge.list_path:
                self._reply(404, {"message": "Not Found"})
                return
            comment = {"id": 5000 + len(thread.comments), "body": self._body()}
            thread.comments.append(comment)
            self._reply(201, comment)

        def _update(self) -> None:
            if not self._admitted():
                return
            if self.command != forge.update_method or not self.path.startswith(forge.update_prefix):
                self._reply(404, {"message": "Not Found"})
                return
            found = [c for c in thread.comments if str(c["id"]) == self.path[len(forge.update_prefix):]]
            if not found:
                self._reply(404, {"message": "Not Found"})
                return
            found[0]["body"] = self._body()
            self._reply(200, found[0])

        do_PATCH = _update
        do_PUT = _update

    return Handler


@pytest.fixture(params=sorted(FORGES))
def forge(request):
    thread = Thread(FORGES[request.param], comments=[{"id": 100 + i, "body": f"comment {i}"} for i in range(3)])
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(thread))
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        yield thread, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


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
