"""A small Nautobot REST client: token auth, pagination, bulk create/update/delete.

The token is sent in the Authorization header only; no message, exception or repr carries it.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

import requests

__all__ = ["SotError", "NautobotClient"]

_PAGE = 500
_BULK = 200
# Writes read back only the ids: the many-to-many fields (tags above all) are left out of their answers, which
# Nautobot otherwise serializes for every object written (more than half of a push's server time, measured).
# Tags sent in a payload are still written (Nautobot makes those fields write-only under this parameter).
_WRITE = {"exclude_m2m": "true"}


class SotError(Exception):
    """The source-of-truth server refused or failed a request; the message says which and why."""


_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = re.compile(rf"^(?:{_LABEL}\.)*{_LABEL}$|^\[[0-9A-Fa-f:.]+\]$")
_PATH = re.compile(r"^(/[A-Za-z0-9._~-]*)*$")


def check_url(url: str) -> str:
    """http(s)://host[:port][/path], nothing else (no credentials, query, fragment, space or control
    character); SotError naming what is allowed otherwise."""
    allowed = f"--url {url[:80]!r}: expected http(s)://host[:port][/path] (host a DNS name, IPv4 or [IPv6])"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise SotError(allowed) from None
    netloc_host = parts.netloc.rsplit(":", 1)[0] if port is not None else parts.netloc
    if (parts.scheme not in ("http", "https") or not parts.netloc or "@" in parts.netloc or parts.query
            or parts.fragment or not _HOST.match(netloc_host) or not _PATH.match(parts.path)
            or port == 0 or len(url) > 2048):
        raise SotError(allowed)
    return url


class NautobotClient:
    def __init__(self, url: str, token: str, *, timeout: float = 300.0, verify: bool = True) -> None:
        check_url(url)
        if not token:
            raise SotError("no API token: set it in the environment or as a Pulumi secret")
        self.base = url.rstrip("/")
        self._session = requests.Session()
        self._session.headers.update({"Authorization": f"Token {token}", "Accept": "application/json"})
        self._session.verify = verify
        self.timeout = timeout
        self.calls = 0

    def __repr__(self) -> str:
        return f"NautobotClient({self.base!r})"

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        url = path if path.startswith("http") else f"{self.base}/api/{path.lstrip('/')}"
        self.calls += 1
        try:
            response = self._session.request(method, url, timeout=self.timeout, **kwargs)
        except requests.RequestException as exc:
            raise SotError(f"{method} {urlsplit(url).path}: {type(exc).__name__}: cannot reach {self.base}") from None
        if response.status_code >= 400:
            detail = response.text[:1500]
            raise SotError(f"{method} {urlsplit(url).path}: HTTP {response.status_code}: {detail}")
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    def status(self) -> dict[str, Any]:
        return self._request("GET", "status/")

    def list(self, endpoint: str, **params: Any) -> builtins.list[dict[str, Any]]:
        return list(self.iter(endpoint, **params))

    def iter(self, endpoint: str, **params: Any) -> Iterator[dict[str, Any]]:
        query: dict[str, Any] = {"limit": _PAGE, "depth": 1, **params}
        page = self._request("GET", endpoint, params=query)
        while True:
            yield from page["results"]
            if not page.get("next"):
                return
            page = self._request("GET", page["next"])

    def create(self, endpoint: str, objects: builtins.list[dict[str, Any]],
               chunk_size: int = _BULK) -> builtins.list[dict[str, Any]]:
        created: builtins.list[dict[str, Any]] = []
        for chunk in _chunks(objects, chunk_size):
            created += self._request("POST", endpoint, json=chunk, params=_WRITE)
        return created

    def update(self, endpoint: str, objects: builtins.list[dict[str, Any]]) -> None:
        for chunk in _chunks(objects):
            self._request("PATCH", endpoint, json=chunk, params=_WRITE)

    def delete(self, endpoint: str, ids: Iterable[str]) -> None:
        for chunk in _chunks([{"id": i} for i in ids]):
            self._request("DELETE", endpoint, json=chunk, params=_WRITE)


def _chunks(items: list[Any], size: int = _BULK) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
