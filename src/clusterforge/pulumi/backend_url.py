"""Pulumi backend URLs: which kinds clusterforge drives, and how one is shown without its password.

A backend URL may carry a password (``postgres://user:secret@db:5432/pulumi``). The engine gets the URL
without it and the password in ``PGPASSWORD`` (lib/pq reads it, as libpq does), so no engine message can
repeat it; every URL printed goes through :func:`BackendUrl.masked`, and :func:`mask` scrubs the password
out of any text (engine output, errors) as a second guard.

Kinds (Pulumi's DIY backends, pkg/backend/diy): ``file://`` (one machine, or a shared file system) and
``postgres://`` (since Pulumi v3.176: one table, ``pulumi_state`` unless the URL's ``table=`` names another).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import SplitResult, parse_qsl, unquote, urlencode, urlsplit, urlunsplit

__all__ = ["SCHEMES", "BackendUrl", "BackendUrlError", "mask"]

# scheme -> what it is, for messages; postgres:// is the spelling the engine registers (not postgresql://)
SCHEMES = {"file": "a directory on this machine or a shared file system", "postgres": "a PostgreSQL database"}
DEFAULT_TABLE = "pulumi_state"
MASK = "****"


class BackendUrlError(ValueError):
    """A backend URL clusterforge does not drive; the message says which kinds it does."""


@dataclass(frozen=True)
class BackendUrl:
    text: str  # as given, password included

    @classmethod
    def parse(cls, text: str) -> BackendUrl:
        try:
            parts = urlsplit(text)
            parts.port  # noqa: B018  (a port out of range or not a number raises here, not in the engine)
        except ValueError as exc:  # an unclosed [ in the host, a port past 65535: said without the URL's text
            raise BackendUrlError(f"backend URL is not a URL ({exc})") from None
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text + unquote(text)):
            raise BackendUrlError("backend URL holds a control character (a newline, a tab), raw or %-encoded")
        if parts.scheme not in SCHEMES:
            kinds = "; ".join(f"{scheme}:// ({what})" for scheme, what in SCHEMES.items())
            shown = f"{parts.scheme}://" if parts.scheme else repr(_masked(parts) if parts.netloc else text[:40])
            raise BackendUrlError(f"backend URL {shown}: expected one of {kinds}")
        if parts.scheme == "file" and not parts.path:
            raise BackendUrlError("backend URL file://: no directory after file://")
        if parts.scheme == "file" and parts.netloc not in ("", "localhost"):
            raise BackendUrlError(f"backend URL file://{parts.netloc}/...: a file URL names a directory of this"
                                  " machine, file:///absolute/path (a host or a relative path is not one)")
        return cls(text)

    @property
    def scheme(self) -> str:
        return urlsplit(self.text).scheme

    @property
    def shared(self) -> bool:
        """A backend other operators reach (not a directory of this machine's state dir)."""
        return self.scheme != "file"

    @property
    def password(self) -> str | None:
        value = urlsplit(self.text).password
        return unquote(value) if value else None

    @property
    def engine_url(self) -> str:
        """The URL the engine is given: the password left out (it goes in PGPASSWORD)."""
        parts = urlsplit(self.text)
        if parts.password is None:
            return self.text
        return urlunsplit(parts._replace(netloc=_netloc(parts, None)))

    def masked(self) -> str:
        """The URL as it may be printed: a password becomes ****."""
        return _masked(urlsplit(self.text))

    @property
    def table(self) -> str:
        return dict(parse_qsl(urlsplit(self.text).query)).get("table") or DEFAULT_TABLE

    def libpq(self) -> tuple[str, dict[str, str]]:
        """(conninfo URI without password or ``table``, environment with PGPASSWORD) for psql."""
        parts = urlsplit(self.text)
        query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "table"])
        uri = urlunsplit(parts._replace(scheme="postgresql", netloc=_netloc(parts, None), query=query))
        return uri, ({"PGPASSWORD": self.password} if self.password else {})


def _netloc(parts: SplitResult, password: str | None) -> str:
    host = parts.netloc.rsplit("@", 1)[-1]
    if parts.username is None:
        return host
    user = parts.netloc.rsplit("@", 1)[0].split(":", 1)[0]  # as written (percent-encoding kept)
    return f"{user}:{password}@{host}" if password is not None else f"{user}@{host}"


def _masked(parts: SplitResult) -> str:
    if parts.password is None:
        return urlunsplit(parts)
    return urlunsplit(parts._replace(netloc=_netloc(parts, MASK)))


def mask(text: str, url: str | None) -> str:
    """``text`` with the password of ``url`` (as written and decoded) replaced by ****."""
    if not url:
        return text
    raw = urlsplit(url).password
    for secret in {raw, unquote(raw)} if raw else ():
        if secret:
            text = text.replace(secret, MASK)
    return text
