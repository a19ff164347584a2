"""Content hashes that decide when an applied resource is stale (config bytes, roles, host_vars)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["files_hash", "tree_hash", "text_hash"]

# Editor droppings and byte-code never change what Ansible runs.
_IGNORED_PARTS = ("__pycache__", ".pytest_cache")
_IGNORED_SUFFIXES = (".pyc", ".swp", "~", ".retry")


def text_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def files_hash(files: Mapping[str, str | bytes]) -> str:
    """One hash over {relative path: content}, independent of dict order."""
    digest = hashlib.sha256()
    for path in sorted(files):
        content = files[path]
        data = content.encode() if isinstance(content, str) else content
        digest.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
    return "sha256:" + digest.hexdigest()


def _walk(root: Path) -> Iterable[Path]:
    if root.is_file():
        yield root
        return
    for path in sorted(root.rglob("*")):
        if not path.is_file() or any(part in _IGNORED_PARTS for part in path.parts):
            continue
        if path.name.endswith(_IGNORED_SUFFIXES):
            continue
        yield path


def tree_hash(roots: Iterable[Path], base: Path) -> str:
    """One hash over every file under `roots` (paths relative to `base`, so checkouts agree)."""
    files: dict[str, bytes] = {}
    for root in roots:
        if not root.exists():
            continue
        for path in _walk(root):
            files[path.relative_to(base).as_posix()] = path.read_bytes()
    return files_hash(files)
