"""A loopback stand-in of the forges' comment APIs (GitHub issue comments, GitLab merge request notes), as
tests/package/test_post_comment.py describes; ci/post-comment.sh talks to it through GITHUB_API_URL and
CI_API_V4_URL. No forge is reachable from here."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TOKEN = "stand-in-token"  # the stand-in's own; not a secret of anything


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


@contextlib.contextmanager
def serving(thread: Thread) -> Iterator[str]:
    """The stand-in serving ``thread`` on a free loopback port; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(thread))
    worker = threading.Thread(target=server.serve_forever, daemon=True)
    worker.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
