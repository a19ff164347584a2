"""The one writer of output directories: contained, owned, and replaced whole or not at all.

Every command that writes files (render, report, export, sot pull, collection build, the rendered tree a
provisioning run or the Pulumi program hands to Ansible) writes through ``write_tree`` or ``write_file``:

* containment: a relative path is refused unless it is a plain path below the root (no absolute path, no
  ``..``, no empty or ``.`` part, no control character); the parent that receives it is resolved (symlinks
  and all) and must still be inside the resolved root, so neither a hostile name (a catalog ``vendor``
  of ``../../../x``) nor a symlink planted in the output directory can carry a write out of it;
* the root itself: ``/`` is refused, and ``check_out_arg`` (the CLI's ``--out`` parser) refuses an empty
  value, which would otherwise be the current directory (an unset ``$OUT`` in CI);
* ownership: DIR/.clusterforge-output lists every file this writer put there; an existing top-level
  directory is replaced only when every file in it is one the writer wrote before or writes now, so a
  user's own files (``./ansible/hosts.ini`` beside ``--out .``) are never deleted;
* whole or not at all: every top-level entry is staged completely inside DIR, each existing one is
  checked to be of the same kind before anything moves, then each is swapped in with two renames; a
  failure part way puts back what was already swapped, so DIR is as it was before.

Imports nothing of the package: provision, verify, render and the command line all use it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

__all__ = ["OutputRefused", "PathEscape", "check_out_arg", "check_out_dir", "write_tree", "write_file", "MANIFEST"]

MANIFEST = ".clusterforge-output"
_STAGE_PREFIX = ".clusterforge-stage-"


class OutputRefused(Exception):
    """A write this writer will not make (the output directory's state); the message names the path and why."""


class PathEscape(OutputRefused):
    """A file's name (from the declaration or catalog) would leave the output directory."""


def check_out_arg(raw: str | os.PathLike[str]) -> Path:
    """The CLI's ``--out DIR``: refuses an empty value and the file-system root."""
    raw = os.fspath(raw)
    if raw.strip() == "":
        raise OutputRefused("an empty output directory would be the current directory; name one (e.g. --out out/)")
    path = Path(raw)
    if _resolved(path) == Path("/"):
        raise OutputRefused(f"{raw!r} is the file-system root; name a directory of its own")
    return path


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _relative(relative: str) -> PurePosixPath:
    """A file's path below the root, or OutputRefused."""
    pure = PurePosixPath(relative)
    bad = (not relative or pure.is_absolute() or any(part in ("", ".", "..") for part in relative.split("/"))
           or any(ord(ch) < 32 or ch == "\x7f" for ch in relative))
    if bad:
        raise PathEscape(f"{relative!r}: not a plain path inside the output directory (no '..', no absolute "
                            "path, no empty part)")
    if pure.parts[0] == MANIFEST or pure.parts[0].startswith(_STAGE_PREFIX):
        raise OutputRefused(f"{relative!r}: {pure.parts[0]} is the writer's own name")
    return pure


def _contained(root: Path, target: Path, relative: object) -> None:
    """target's parent, resolved, is inside root (already resolved)."""
    parent = _resolved(target.parent)
    if parent != root and root not in parent.parents:
        raise PathEscape(f"{relative!s}: resolves to {parent}, outside the output directory {root}")


def check_out_dir(out_dir: Path) -> Path:
    """out_dir resolved, or OutputRefused when no write there can succeed (the root, a file): checked by a command
    before its work, so it refuses before it builds."""
    root = _resolved(Path(out_dir))
    if root == Path("/"):
        raise OutputRefused(f"{out_dir}: the file-system root is not an output directory")
    if root.exists() and not root.is_dir():
        raise OutputRefused(f"{out_dir}: exists and is not a directory")
    return root


def _root(out_dir: Path) -> Path:
    root = check_out_dir(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    return root


def _manifest(root: Path) -> set[str]:
    path = root / MANIFEST
    if path.is_symlink() or not path.is_file():
        return set()
    return {line for line in path.read_text(errors="replace").splitlines() if line}


def _files_under(top: Path, name: str) -> list[str]:
    found = []
    for base, dirs, files in os.walk(top):
        rel = os.path.relpath(base, top)
        prefix = name if rel == "." else f"{name}/{rel}"
        found += [f"{prefix}/{f}" for f in files]
        found += [f"{prefix}/{d}" for d in dirs if os.path.islink(os.path.join(base, d))]
    return found


def _check_replaceable(root: Path, top: str, is_dir: bool, known: set[str]) -> None:
    current = root / top
    if not current.exists() and not current.is_symlink():
        return
    if current.is_symlink():
        raise OutputRefused(f"{current}: is a symbolic link; the writer replaces only what it wrote")
    if current.is_dir() != is_dir:
        kind = "a directory" if current.is_dir() else "a file"
        raise OutputRefused(f"{current}: is {kind}, the output is {'a directory' if is_dir else 'a file'}; "
                            "nothing was replaced")
    if is_dir:
        foreign = [f for f in _files_under(current, top) if f not in known]
        if foreign:
            more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
            raise OutputRefused(f"{root / foreign[0]}{more}: not written by clusterforge; replacing {current} "
                                "would delete it (move it, or choose another output directory); nothing was "
                                "replaced")


def write_tree(out_dir: Path, files: Mapping[str, str | bytes]) -> list[str]:
    """Write ``files`` (relative path -> content) under out_dir, each top-level entry replaced whole.

    Returns the top-level entries replaced. Raises OutputRefused (nothing written) for a path outside
    out_dir, a root out_dir, an existing entry of another kind, or a directory holding files the writer
    did not write; an OSError part way leaves out_dir as it was.
    """
    relatives = {relative: _relative(relative) for relative in files}
    tops: dict[str, bool] = {}
    for pure in relatives.values():
        is_dir = len(pure.parts) > 1
        if tops.setdefault(pure.parts[0], is_dir) != is_dir:
            raise OutputRefused(f"{pure.parts[0]!r}: both a file and a directory in one output")
    root = _root(out_dir)
    previous = _manifest(root)
    known = previous | set(files)
    for top, is_dir in tops.items():
        _check_replaceable(root, top, is_dir, known)
    stage = Path(tempfile.mkdtemp(dir=root, prefix=_STAGE_PREFIX))
    swapped: list[tuple[Path, Path | None, Path]] = []  # (current, old moved aside or None, new's stage path)
    try:
        made: set[Path] = set()
        for relative, content in files.items():
            target = stage.joinpath(*relatives[relative].parts)
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
        for top in sorted(tops):
            new, current = stage / top, root / top
            _contained(root, current, top)
            old: Path | None = None
            if current.exists():
                old = stage / f".old-{top}"
                os.rename(current, old)
            swapped.append((current, old, new))
            os.rename(new, current)
        owned = sorted({f for f in previous if PurePosixPath(f).parts[0] not in tops} | set(files))
        _atomic(root / MANIFEST, "".join(f"{f}\n" for f in owned).encode(), root)
        return sorted(tops)
    except BaseException:
        for current, old, new in reversed(swapped):
            if not new.exists() and (current.exists() or current.is_symlink()):
                os.rename(current, new)
            if old is not None:
                os.rename(old, current)
        raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _atomic(path: Path, data: bytes, root: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        _contained(root, path, path.name)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_file(root: Path, relative: str, content: str | bytes) -> Path:
    """One file at root/relative, atomically (a temporary beside it, then a rename), contained in root."""
    pure = _relative(relative)
    base = _root(root)
    target = base.joinpath(*pure.parts)
    for parent in reversed(target.parents):
        if parent == base or base not in parent.parents:
            continue
        if parent.exists() or parent.is_symlink():  # each existing step, resolved, is still inside the root
            _contained(base, parent / "_", relative)
        else:
            parent.mkdir()
    _contained(base, target, relative)
    _atomic(target, content.encode() if isinstance(content, str) else content, base)
    return target
