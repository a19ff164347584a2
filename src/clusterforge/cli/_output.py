"""`--out DIR` for every command that writes: parsed before anything runs, written through the one writer.

Exit codes (cli/_common): a file name from the declaration that would leave DIR is the declaration's fault
(1); an empty or root ``--out`` is a usage error (2); DIR holding something the writer may not replace,
or a failing disk, is the environment (3). In every case nothing under DIR was replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import typer

from clusterforge.cli._common import err, say
from clusterforge.outdir import OutputRefused, PathEscape, check_out_arg, write_tree

__all__ = ["out_arg", "write_out"]


def out_arg(raw: str | Path) -> Path:
    """typer ``parser=`` for ``--out``: the raw text, so an empty value is told apart from ``.``."""
    try:
        return check_out_arg(raw)
    except OutputRefused as exc:
        raise typer.BadParameter(str(exc)) from None


def write_out(out_dir: Path, files: Mapping[str, str | bytes]) -> list[str]:
    """write_tree, with its refusals as one error line and an exit code instead of a traceback."""
    try:
        return write_tree(out_dir, files)
    except PathEscape as exc:
        say(err, f"error: {out_dir}: {exc}; nothing was written")
        raise typer.Exit(1) from None
    except OutputRefused as exc:
        say(err, f"error: {exc}")
        raise typer.Exit(3) from None
    except OSError as exc:
        say(err, f"error: writing {out_dir}: {exc.strerror or exc}"
                 f"{f' ({exc.filename})' if exc.filename else ''}; nothing under it was replaced")
        raise typer.Exit(3) from None
