"""Small helpers shared by the lab modules: where things live, running commands, atomic writes."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from clusterforge.paths import lab_home

Progress = Callable[[str | None, str], None]
"""progress(host or None, message)"""


class LabError(RuntimeError):
    """Anything that stops the lab from coming up or going down."""


def _noop(host: str | None, msg: str) -> None:  # pragma: no cover - trivial
    pass


def lab_dir(lab: str) -> Path:
    return lab_home() / lab


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
        raise LabError(f"command failed ({p.returncode}): {' '.join(map(str, argv))}\n{p.stderr.strip()}")
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
    """An exclusive flock held for the duration (serialises up/down/build across processes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def missing_prerequisites() -> list[str]:
    """Reasons the lab cannot run on this machine (empty when it can)."""
    why = []
    if os.geteuid() != 0:
        why.append("not root")
    for tool in ("debootstrap", "systemd-nspawn", "ip", "ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            why.append(f"{tool} not found")
    try:
        with open("/proc/filesystems") as f:
            if "overlay" not in f.read():
                why.append("kernel lacks overlayfs")
    except OSError:
        why.append("no /proc/filesystems")
    return why
