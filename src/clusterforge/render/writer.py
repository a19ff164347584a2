"""The rendered tree's writer is the package's one output writer (clusterforge.outdir): contained, owned,
staged inside DIR and swapped in whole or not at all."""

from __future__ import annotations

from pathlib import Path

from clusterforge.outdir import OutputRefused, write_file, write_tree

__all__ = ["write_tree", "atomic_write", "write_file", "OutputRefused"]


def atomic_write(path: Path, content: str | bytes) -> None:
    """One file at path, atomically, contained in its own directory."""
    write_file(path.parent, path.name, content)
