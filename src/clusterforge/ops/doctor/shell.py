"""How the doctor runs a read-only command on a host: here, or over SSH (host keys checked)."""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass
from typing import Protocol

__all__ = ["LocalShell", "Result", "Shell", "SshShell"]

TIMEOUT_S = 30


@dataclass(frozen=True)
class Result:
    rc: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        return self.rc == 0


class Shell(Protocol):
    name: str

    def run(self, script: str) -> Result: ...


def _run(argv: list[str]) -> Result:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Result(124, "", f"no answer within {TIMEOUT_S} s")
    except OSError as exc:
        return Result(127, "", str(exc))
    return Result(proc.returncode, proc.stdout, proc.stderr)


@dataclass
class LocalShell:
    name: str = "localhost"

    def run(self, script: str) -> Result:
        return _run(["/bin/sh", "-c", script])


@dataclass
class SshShell:
    name: str
    ssh_config: str | None = None

    def run(self, script: str) -> Result:
        argv = ["ssh"] + (["-F", self.ssh_config] if self.ssh_config else [])
        argv += ["-o", "BatchMode=yes", "-o", "ConnectTimeout=10", self.name, "/bin/sh -c " + shlex.quote(script)]
        return _run(argv)
