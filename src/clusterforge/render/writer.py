"""Atomic output: everything is rendered in memory, staged beside DIR, then swapped into place."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["write_tree", "atomic_write"]


def atomic_write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode() if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_tree(out_dir: Path, files: dict[str, str | bytes]) -> list[str]:
    """Write `files` (relative path -> content) under out_dir.

    Each top-level entry (a file or a directory such as ansible/) is staged completely, then
    swapped in with renames, so readers never see a half-written directory and a failure before
    the swap leaves out_dir untouched. Returns the top-level entries replaced.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".{out_dir.name}.stage-"))
    try:
        for relative, content in files.items():
            target = stage / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
        tops = sorted({relative.split("/", 1)[0] for relative in files})
        for top in tops:
            new, current = stage / top, out_dir / top
            if current.is_dir() and not current.is_symlink():
                old = stage / f".old-{top}"
                os.rename(current, old)
                os.rename(new, current)
            else:
                os.replace(new, current)
        return tops
    finally:
        shutil.rmtree(stage, ignore_errors=True)
