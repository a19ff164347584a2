"""SQL on the state database through ``psql``: the stack locks' table and the engine's lock records.

Each call is one short psql session (``-X``: no ~/.psqlrc; ``ON_ERROR_STOP``: the first error fails it),
the SQL on stdin with values bound as psql variables (``:'name'`` quotes them as literals), so no value
is ever spliced into SQL text. The connection string carries no password: it is in PGPASSWORD, the
child's environment only, never argv (which other users of the machine can read).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping

from clusterforge.pulumi.backend_url import BackendUrl, mask

__all__ = ["PsqlError", "Psql"]

TIMEOUT_S = 30.0
FIELD_SEP = "\x1f"  # unit separator: never in the values stored here


class PsqlError(RuntimeError):
    """psql is missing, the database is unreachable, or a statement failed (the password masked)."""


class Psql:
    def __init__(self, url: BackendUrl, env: Mapping[str, str] | None = None) -> None:
        self.url = url
        self.conninfo, secret = url.libpq()
        self.env = {**os.environ, **(env or {}), **secret}

    def rows(self, sql: str, **values: str | int | float) -> list[list[str]]:
        """Run ``sql``; the rows its statements return, in order, each a list of text fields."""
        binary = shutil.which("psql")
        if binary is None:
            raise PsqlError("psql is not on PATH: the postgres backend's stack locks need it"
                            " (Debian: apt-get install postgresql-client)")
        argv = [binary, "-X", "-q", "-A", "-t", "-F", FIELD_SEP, "-v", "ON_ERROR_STOP=1", "-d", self.conninfo]
        for name, value in values.items():
            argv += ["-v", f"{name}={value}"]
        try:
            done = subprocess.run(argv, input=sql, capture_output=True, text=True, env=self.env, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise PsqlError(f"{self.url.masked()}: no answer in {TIMEOUT_S:.0f} s") from None
        if done.returncode != 0:
            problem = mask(done.stderr.strip() or f"psql exited {done.returncode}", self.url.text)
            raise PsqlError(f"{self.url.masked()}: {problem}")
        return [line.split(FIELD_SEP) for line in done.stdout.splitlines() if line]
