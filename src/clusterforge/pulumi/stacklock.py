"""The lock a clusterforge run takes on a stack: it says who holds it, since when and from where.

Pulumi's own DIY lock is a record per run with no lease: a second run fails with "currently locked", and
a crashed run's record stays until `pulumi cancel`. clusterforge takes its own lock first, for the
whole `up`/`destroy` (preview and confirmation included), and keeps a holder record with it:

  user, host, pid      who runs it, where (``host`` with ``pid`` lets a run on the same machine see
                       that the holder is gone)
  command, note        what it does (up, destroy) and from where beyond the host: $CLUSTERFORGE_LOCK_NOTE,
                       else a CI job's URL (GitHub Actions, GitLab CI, Jenkins)
  acquired_at          since when
  renewed_at, lease_s  a heartbeat renews the record every lease/3 seconds; a record not renewed for
                       lease_s is a run that is gone (its machine lost, its process stopped)

A second run is refused at once with that record (:class:`StackLocked`). A record whose run is gone
(its pid no longer runs on this host, or its lease ran out) is cleared by the next run, which says so;
`clusterforge unlock` clears the rest, after a confirmation.

Where the lock lives follows the backend:

  file://     ``<backend dir>/.clusterforge/locks/<stack>.lock``: flock(2) on the file is the lock (the
              kernel drops it when the process dies, SIGKILL included); the file holds the JSON record
  postgres:// the table ``clusterforge_stack_locks`` in the state database, one row per locked stack;
              taking it is an INSERT that only one run wins, clearing a stale row a DELETE of that row's
              token, so two runs never both hold the stack. Ages come from the server's clock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import getpass
import json
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from clusterforge.ops.proctree import alive
from clusterforge.pulumi._pg import Psql
from clusterforge.pulumi.backend_url import BackendUrl

__all__ = ["LEASE_ENV", "FileLocks", "Holder", "LockStore", "PostgresLocks", "StackLocked", "held", "lease_seconds",
           "stale_reason", "store_for"]

LEASE_ENV = "CLUSTERFORGE_LOCK_LEASE_S"
NOTE_ENV = "CLUSTERFORGE_LOCK_NOTE"
LEASE_KEY = "lockLease"  # clusterforge:lockLease in the stack's settings
DEFAULT_LEASE_S = 600
MIN_LEASE_S = 3
Say = Callable[[str], Any]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Holder:
    stack: str
    token: str
    user: str
    host: str
    pid: int
    command: str
    acquired_at: str  # UTC, ISO 8601
    renewed_at: str
    lease_s: int
    note: str = ""
    age_s: float = 0.0  # seconds since renewed_at when read (not stored)

    @classmethod
    def mine(cls, stack: str, command: str, lease_s: int, environ: Mapping[str, str] = os.environ) -> Holder:
        now = _now()
        return cls(stack=stack, token=secrets.token_hex(8), user=getpass.getuser(), host=socket.gethostname(),
                   pid=os.getpid(), command=command, acquired_at=now, renewed_at=now, lease_s=lease_s,
                   note=ci_note(environ))

    def describe(self) -> str:
        where = f", from {self.note}" if self.note else ""
        return (f"`{self.command}` by {self.user}@{self.host} (pid {self.pid}) since {self.acquired_at}{where};"
                f" last renewed {self.age_s:.0f} s ago, lease {self.lease_s} s")

    def record(self) -> str:
        data = asdict(self)
        data.pop("age_s")
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_record(cls, text: str, age_s: float) -> Holder:
        data = json.loads(text)
        fields = {name: data[name] for name in cls.__dataclass_fields__ if name in data and name != "age_s"}
        return cls(**fields, age_s=age_s)


def ci_note(environ: Mapping[str, str]) -> str:
    """Where a run comes from beyond its host: the operator's note, else the CI job's URL."""
    if environ.get(NOTE_ENV):
        return environ[NOTE_ENV]
    if environ.get("GITHUB_RUN_ID") and environ.get("GITHUB_REPOSITORY"):
        server = environ.get("GITHUB_SERVER_URL", "https://github.com")
        return f"{server}/{environ['GITHUB_REPOSITORY']}/actions/runs/{environ['GITHUB_RUN_ID']}"
    return environ.get("CI_JOB_URL") or environ.get("BUILD_URL") or ""


def stale_reason(holder: Holder, host: str) -> str | None:
    """Why ``holder``'s run is gone (None: it may still run). ``host``: this machine's name."""
    if holder.host == host and not alive(holder.pid):
        return f"its process (pid {holder.pid}) no longer runs on {host}"
    if holder.age_s > holder.lease_s:
        return f"it was last renewed {holder.age_s:.0f} s ago, past its lease of {holder.lease_s} s"
    return None


def lease_seconds(config: Mapping[str, str], environ: Mapping[str, str] = os.environ) -> int:
    """$CLUSTERFORGE_LOCK_LEASE_S, else the stack's clusterforge:lockLease, else 600; ValueError if not a
    whole number of seconds of at least 3."""
    source, value = (LEASE_ENV, environ[LEASE_ENV]) if environ.get(LEASE_ENV) else (
        f"clusterforge:{LEASE_KEY}", config.get(LEASE_KEY) or str(DEFAULT_LEASE_S))
    try:
        lease = int(value)
    except ValueError:
        raise ValueError(f"{source} is {value!r}; expected a whole number of seconds") from None
    if lease < MIN_LEASE_S:
        raise ValueError(f"{source} is {lease}; expected at least {MIN_LEASE_S} seconds")
    return lease


class StackLocked(RuntimeError):
    """Another run holds the stack; ``holder`` says who."""

    def __init__(self, holder: Holder, waited_s: float = 0.0) -> None:
        self.holder = holder
        self.waited_s = waited_s
        overdue = holder.age_s > holder.lease_s
        hint = (" It is past its lease but its process still holds the lock: if that run hangs, stop pid"
                f" {holder.pid} on {holder.host}." if overdue else
                " Wait for it; if that run is gone for good, `clusterforge unlock` clears its lock.")
        waited = f" (still, after waiting {waited_s:.0f} s for it)" if waited_s else ""
        super().__init__(f"stack {holder.stack} is locked{waited}: {holder.describe()}.{hint}")


class LockStore(Protocol):
    """Where one backend's stack locks live."""

    @property
    def where(self) -> str: ...

    def take(self, mine: Holder) -> tuple[Holder | None, Holder | None]:
        """(None, holder) when another run holds the stack; (stale, None) when taken, ``stale`` being the
        record of a gone run that this take replaced (None if there was none)."""
        ...

    def renew(self, mine: Holder) -> bool:
        """Renew the lease; False when the lock is no longer ours."""
        ...

    def release(self, mine: Holder) -> None: ...

    def holder(self, stack: str) -> Holder | None: ...

    def clear(self, stale: Holder) -> bool:
        """Remove ``stale``'s record (unlock); False when it is gone or another run's now."""
        ...

    def gone_reason(self, holder: Holder, host: str) -> str:
        """Why a record this store let a run replace belongs to a run that is gone."""
        ...


# --- file backend: flock + JSON record ---------------------------------------------------------------------


@dataclass
class FileLocks:
    root: Path  # the backend directory
    _fds: dict[str, int] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return str(self.root / ".clusterforge" / "locks")

    def _path(self, stack: str) -> Path:
        return Path(self.where) / f"{stack}.lock"

    @staticmethod
    def _read(fd: int, stack: str) -> Holder | None:
        for _ in range(3):  # a record being rewritten by a renewal: read again
            text = os.pread(fd, 1 << 16, 0).decode(errors="replace")
            if not text.strip():
                return None
            try:
                renewed = datetime.fromisoformat(json.loads(text)["renewed_at"])
                return Holder.from_record(text, (datetime.now(UTC) - renewed).total_seconds())
            except (ValueError, KeyError, TypeError):
                continue
        return Holder(stack, "?", "?", "?", 0, "?", "?", "?", 0, note="(unreadable lock record)")

    @staticmethod
    def _write(fd: int, holder: Holder) -> None:
        data = (holder.record() + "\n").encode()
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))

    def take(self, mine: Holder) -> tuple[Holder | None, Holder | None]:
        path = self._path(mine.stack)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                os.close(fd)
                raise
            holder = self._read(fd, mine.stack)
            os.close(fd)
            return None, holder or replace(mine, user="?", host="?", pid=0, command="?", note="(no record yet)")
        previous = self._read(fd, mine.stack)
        self._write(fd, mine)
        self._fds[mine.stack] = fd
        return previous, None

    def renew(self, mine: Holder) -> bool:
        fd = self._fds.get(mine.stack)
        if fd is None:
            return False
        self._write(fd, replace(mine, renewed_at=_now()))
        return True

    def release(self, mine: Holder) -> None:
        fd = self._fds.pop(mine.stack, None)
        if fd is not None:
            os.ftruncate(fd, 0)
            os.close(fd)  # drops the flock

    def holder(self, stack: str) -> Holder | None:
        path = self._path(stack)
        if not path.exists():
            return None
        fd = os.open(path, os.O_RDONLY)
        try:
            return self._read(fd, stack)
        finally:
            os.close(fd)

    def clear(self, stale: Holder) -> bool:
        path = self._path(stale.stack)
        if not path.exists():
            return False
        fd = os.open(path, os.O_RDWR)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False  # a live process holds it: only stopping that process frees it
            current = self._read(fd, stale.stack)
            if current is None or current.token != stale.token:
                return False
            os.ftruncate(fd, 0)
            return True
        finally:
            os.close(fd)

    @staticmethod
    def gone_reason(holder: Holder, host: str) -> str:
        """A record left in a file nobody flocks: its run ended without releasing (it was killed)."""
        return stale_reason(holder, host) or "its run ended without releasing it (nothing holds the file lock)"


# --- postgres backend: a table with lease columns ----------------------------------------------------------

TABLE = "clusterforge_stack_locks"
CREATE = f"""\
CREATE TABLE IF NOT EXISTS {TABLE} (
    stack TEXT PRIMARY KEY, token TEXT NOT NULL, username TEXT NOT NULL, hostname TEXT NOT NULL,
    pid INTEGER NOT NULL, command TEXT NOT NULL, note TEXT NOT NULL DEFAULT '',
    acquired_at TIMESTAMPTZ NOT NULL DEFAULT now(), renewed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    lease_s INTEGER NOT NULL);
"""
STAMP = "to_char({0} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
SELECT = (f"SELECT 'holder', stack, token, username, hostname, pid, command, note, {STAMP.format('acquired_at')},"
          f" {STAMP.format('renewed_at')}, lease_s, extract(epoch FROM now() - renewed_at)"
          f" FROM {TABLE} WHERE stack = :'stack';")
INSERT = (f"INSERT INTO {TABLE} (stack, token, username, hostname, pid, command, note, lease_s)"
          " VALUES (:'stack', :'token', :'user', :'host', :pid, :'command', :'note', :lease)"
          " ON CONFLICT (stack) DO NOTHING RETURNING 'taken';")


def _holder(row: list[str]) -> Holder:
    _, stack, token, user, host, pid, command, note, acquired, renewed, lease, age = row
    return Holder(stack, token, user, host, int(pid), command, acquired, renewed, int(lease), note, float(age))


@dataclass
class PostgresLocks:
    url: BackendUrl
    env: Mapping[str, str] | None = None

    @property
    def where(self) -> str:
        return f"table {TABLE} of {self.url.masked()}"

    def _sql(self) -> Psql:
        return Psql(self.url, self.env)

    def _read(self, rows: list[list[str]]) -> Holder | None:
        found = [row for row in rows if row and row[0] == "holder"]
        return _holder(found[0]) if found else None

    def take(self, mine: Holder) -> tuple[Holder | None, Holder | None]:
        stale: Holder | None = None
        for _ in range(3):
            rows = self._sql().rows(CREATE + INSERT + SELECT, stack=mine.stack, token=mine.token, user=mine.user,
                                    host=mine.host, pid=mine.pid, command=mine.command, note=mine.note,
                                    lease=mine.lease_s)
            current = self._read(rows)
            if ["taken"] in rows or (current is not None and current.token == mine.token):
                return stale, None
            if current is None:
                continue  # released between the two statements: try again
            if stale_reason(current, mine.host) is None:
                return None, current
            if self.clear(current):
                stale = current
        raise RuntimeError(f"stack {mine.stack}: could not take its lock in {self.where} (three runs raced for it)")

    def renew(self, mine: Holder) -> bool:
        rows = self._sql().rows(f"UPDATE {TABLE} SET renewed_at = now() WHERE stack = :'stack' AND token = :'token'"
                                " RETURNING 'renewed';", stack=mine.stack, token=mine.token)
        return ["renewed"] in rows

    def release(self, mine: Holder) -> None:
        self._sql().rows(f"DELETE FROM {TABLE} WHERE stack = :'stack' AND token = :'token';",
                         stack=mine.stack, token=mine.token)

    def holder(self, stack: str) -> Holder | None:
        return self._read(self._sql().rows(CREATE + SELECT, stack=stack))

    def clear(self, stale: Holder) -> bool:
        rows = self._sql().rows(f"DELETE FROM {TABLE} WHERE stack = :'stack' AND token = :'token' RETURNING 'gone';",
                                stack=stale.stack, token=stale.token)
        return ["gone"] in rows

    @staticmethod
    def gone_reason(holder: Holder, host: str) -> str:
        return stale_reason(holder, host) or "its run is gone"


def store_for(url: str, env: Mapping[str, str] | None = None) -> LockStore:
    """The lock store of the backend at ``url`` (as given, password included)."""
    parsed = BackendUrl.parse(url)
    if parsed.scheme == "file":
        return FileLocks(Path(unquote(urlsplit(url).path)))
    return PostgresLocks(parsed, env)


# --- holding a lock for a run ------------------------------------------------------------------------------


@contextlib.contextmanager
def held(store: LockStore, stack: str, command: str, lease_s: int, say: Say, wait_s: float = 0.0,
         poll_s: float = 2.0) -> Iterator[Holder]:
    """Hold ``stack``'s lock for the ``with`` block, renewed every lease/3 s. While another run holds it: StackLocked
    at once, or with ``wait_s`` > 0 a queued wait, said once through ``say``, polling every ``poll_s`` until the lock
    is free or ``wait_s`` has passed (then StackLocked naming the holder). A stale record of a gone run is cleared
    and reported through ``say``. Waiters are not ordered: whichever polls first after a release takes it."""
    started = time.monotonic()
    waiting_for: str | None = None
    while True:
        mine = Holder.mine(stack, command, lease_s)  # since when: when taken, not when the wait began
        stale, other = store.take(mine)
        if other is None:
            break
        waited = time.monotonic() - started
        if waited >= wait_s:
            raise StackLocked(other, waited)
        if other.token != waiting_for:
            say(f"stack {stack} is locked: {other.describe()}; waiting for it, up to {wait_s:.0f} s in all (queued)")
            waiting_for = other.token
        time.sleep(max(0.05, min(poll_s, wait_s - waited)))
    if waiting_for is not None:
        say(f"stack {stack}: took the lock after waiting {time.monotonic() - started:.0f} s")
    if stale is not None:
        say(f"stack {stack}: cleared the lock of a run that is gone ({stale.describe()}):"
            f" {store.gone_reason(stale, mine.host)}")
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(store, mine, stop, say), name=f"lock-{stack}", daemon=True)
    beat.start()
    try:
        yield mine
    finally:
        stop.set()
        beat.join(timeout=5)
        store.release(mine)


def _heartbeat(store: LockStore, mine: Holder, stop: threading.Event, say: Say) -> None:
    interval = max(1.0, mine.lease_s / 3)
    warned = False
    while not stop.wait(interval):
        try:
            if not store.renew(mine):
                say(f"warning: stack {mine.stack}: this run no longer holds its lock in {store.where}"
                    " (cleared as past its lease, or unlocked); another run may start on this stack")
                return
            warned = False
        except Exception as exc:  # noqa: BLE001 - reported; the next beat tries again
            if not warned:
                say(f"warning: stack {mine.stack}: could not renew its lock in {store.where}: {exc}")
                warned = True
