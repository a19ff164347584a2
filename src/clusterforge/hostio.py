"""Work on this machine that the lab and the bare-metal install share: running a command, writing a file whole,
an exclusive lock, the progress callback, and the one-line error they raise."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from clusterforge.paths import lab_home

__all__ = ["HostError", "Progress", "quiet", "state_dir", "run", "write_atomic", "write_json_atomic", "file_lock"]

Progress = Callable[[str | None, str], None]
"""progress(host or None, message)"""


class HostError(RuntimeError):
    """Anything that stops work on this machine's hosts (the lab, an install): one line, no traceback."""


def quiet(host: str | None, msg: str) -> None:  # pragma: no cover - trivial
    """The progress callback that says nothing."""


def state_dir(name: str) -> Path:
    """Where one lab's (one cluster's) machine state lives: its hosts, its installs, its boot tree."""
    return lab_home() / name


def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    check: bool = True,
    input: str | None = None,
    timeout: float | None = 120,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(
        [str(a) for a in argv],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if check and p.returncode != 0:
        raise HostError(f"command failed ({p.returncode}): {' '.join(map(str, argv))}\n{p.stderr.strip()}")
    return p


def write_atomic(path: Path, data: str | bytes, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, obj: Any) -> None:
    write_atomic(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive flock held for the duration (serialises up/down/build/install across processes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
