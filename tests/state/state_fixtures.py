"""A private PostgreSQL server on loopback for the shared-state tests, and a lock holder in a child process.

The server is Debian's PostgreSQL (``/usr/lib/postgresql/<major>/bin``): a cluster made by initdb in a
temp dir, password authentication (scram-sha-256) on 127.0.0.1 only, a port that was free, stopped and
removed at the end. initdb refuses to run as root, so as root the cluster belongs to the ``postgres``
system user and its tools run through ``runuser``.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
USER = "clusterforge"
DATABASE = "pulumi"


def postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    return found[-1].parent if found else None


@dataclass(frozen=True)
class PgServer:
    port: int
    password: str

    def url(self, database: str = DATABASE, password: bool = True) -> str:
        auth = f"{USER}:{self.password}" if password else USER
        return f"postgres://{auth}@127.0.0.1:{self.port}/{database}?sslmode=disable"

    def psql(self, sql: str, database: str = DATABASE) -> str:
        done = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d",
                               f"postgresql://{USER}@127.0.0.1:{self.port}/{database}?sslmode=disable"],
                              input=sql, capture_output=True, text=True, timeout=30,
                              env={**os.environ, "PGPASSWORD": self.password})
        assert done.returncode == 0, done.stderr
        return done.stdout


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def pg_server() -> Iterator[PgServer]:
    """A started server with database ``pulumi``; skips where Debian's PostgreSQL or psql is not installed."""
    bin_dir = postgres_bin()
    if bin_dir is None or shutil.which("psql") is None:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql; scripts/setup.sh does)")
    root = Path(tempfile.mkdtemp(prefix="cf-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    root.chmod(0o700)
    data, password = root / "data", secrets.token_urlsafe(16)
    (root / "pw").write_text(password + "\n")
    if as_user:
        os.chown(root / "pw", pwd.getpwnam("postgres").pw_uid, -1)
    run = lambda *argv: subprocess.run([*as_user, *argv], capture_output=True, text=True, timeout=120)  # noqa: E731
    done = run(str(bin_dir / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={root / 'pw'}",
               "--auth=scram-sha-256", "--no-locale", "-E", "UTF8", "--no-sync")
    assert done.returncode == 0, done.stdout + done.stderr
    port = 0
    try:
        for _ in range(3):  # a port free when probed may be taken before the server binds it
            port = _free_port()
            done = run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w", "-t", "60", "-o",
                       f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off", "start")
            if done.returncode == 0:
                break
        assert done.returncode == 0, done.stdout + done.stderr + (root / "log").read_text()
        server = PgServer(port, password)
        server.psql(f"CREATE DATABASE {DATABASE};", database="postgres")
        yield server
    finally:
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


HOLDER = """\
import sys, time
from clusterforge.pulumi import stacklock
url, stack, lease = sys.argv[1], sys.argv[2], int(sys.argv[3])
with stacklock.held(stacklock.store_for(url), stack, "up", lease, lambda line: print(line, flush=True)):
    print("held", flush=True)
    time.sleep(600)
"""


def hold_lock(url: str, stack: str, lease_s: int = 60, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """A child process that takes ``stack``'s lock and keeps it (renewing) until it is killed."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, url, stack, str(lease_s)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {}), "PYTHONPATH": str(SRC)})
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip() == "held":
            return proc
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"the lock holder did not take the lock: {proc.communicate()}")
