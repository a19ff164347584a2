"""One side of `clusterforge diff`: a declaration from a file, or `REV:path` read from Git with the catalog
files it names from the same revision (problems then name REV:path, not the scratch copy)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path, PurePosixPath

import typer

from clusterforge.cli._common import err

__all__ = ["includes", "load_side"]


def _git_run(*args: str) -> bytes:
    try:
        result = subprocess.run(["git", *args], capture_output=True, check=False)
    except FileNotFoundError:
        err.print("error: git is not installed; REV:path needs it", markup=False, highlight=False)
        raise typer.Exit(3) from None
    if result.returncode != 0:
        stderr = result.stderr.decode("utf-8", "replace").strip()
        err.print(f"error: git {' '.join(args)}: {stderr}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    return result.stdout


def _git(*args: str) -> str:
    return _git_run(*args).decode("utf-8", "replace")


def _write_blob(rev: str, relative: PurePosixPath, target: Path) -> None:
    """REV:relative as bytes at target; a blob over the loader's size limit becomes a sparse file of its size
    (the loader refuses it by size, naming REV:path), so a huge blob is never read into memory."""
    from clusterforge.model.yamlsafe import MAX_BYTES

    target.parent.mkdir(parents=True, exist_ok=True)
    size = int(_git("cat-file", "-s", f"{rev}:{relative}").strip() or 0)
    if size > MAX_BYTES:
        with target.open("wb") as handle:
            handle.truncate(size)
        return
    target.write_bytes(_git_run("show", f"{rev}:{relative}"))


def _from_git(rev: str, path: str, scratch: Path) -> Path:
    """Write REV:path, and the catalog files it names from the same revision, under scratch."""
    from ruamel.yaml.error import YAMLError

    from clusterforge.model.yamlsafe import UnsafeInput, parse_yaml, read_declaration_text

    if rev.startswith("-"):  # never an option to git
        err.print(f"error: {rev!r} is not a revision", markup=False, highlight=False)
        raise typer.Exit(2)
    if path.startswith(("./", "../")):  # git's rule: ./ is relative to the current directory, else the root
        path = os.path.normpath(_git("rev-parse", "--show-prefix").strip() + path)
    root_relative = PurePosixPath(os.path.normpath(path))
    target = scratch / root_relative
    _write_blob(rev, root_relative, target)
    try:  # under the loader's limits: the same hostile bytes the loader will refuse must not hurt here
        document = parse_yaml(read_declaration_text(target))
    except (UnsafeInput, YAMLError, OSError, RecursionError):
        return target  # the loader reports the problem with its line
    catalogs = document.get("catalog_files", []) if isinstance(document, dict) else []
    for entry in catalogs if isinstance(catalogs, list) else []:
        if not isinstance(entry, str) or entry.startswith("/"):
            continue
        relative = PurePosixPath(os.path.normpath(str(root_relative.parent / entry)))
        if relative.parts and relative.parts[0] == "..":
            continue
        _write_blob(rev, relative, scratch / relative)
    return target


def load_side(source: str, side: Path):
    """(spec, plan, problems): a path on disk, or REV:path read from Git; problems name REV:path, not scratch."""
    from clusterforge.loading import DeclarationError, load_and_plan

    if ":" in source and not Path(source).exists():
        rev, path = source.split(":", 1)
        if not rev or not path:
            err.print(f"error: {source!r}: expected a file or REV:path", markup=False, highlight=False)
            raise typer.Exit(2)
        side.mkdir(parents=True)
        location = _from_git(rev, path, side)
        prefix = f"{side}{os.sep}"
    else:
        location, prefix, rev = Path(source), "", ""
    try:
        spec, plan, _ = load_and_plan(location)
    except DeclarationError as exc:
        problems = [dataclasses.replace(p, file=f"{rev}:{p.file[len(prefix):]}")
                    if prefix and p.file.startswith(prefix) else p for p in exc.problems]
        return None, None, problems
    return spec, plan, []


def includes(later: str, rev: str) -> bool | None:
    """Whether revision ``later`` holds ``rev`` (rev is an ancestor of later, or the same commit), as the Git
    repository of the current directory knows them; None where it cannot tell (no git, a commit it lacks)."""
    if later.startswith("-") or rev.startswith("-"):  # never an option to git
        return None
    try:
        done = subprocess.run(["git", "merge-base", "--is-ancestor", rev, later], capture_output=True, check=False,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return {0: True, 1: False}.get(done.returncode)
