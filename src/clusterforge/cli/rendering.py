"""`clusterforge render FILE --out DIR` (or `-o DIR`, `--out=DIR`; `--switches-only` last) run without the typer
app, as `validate FILE` is (cli/validation): typer, click and Rich are a sixth of a small render's CPU.

It keeps the app's rules (cli/core.render, cli/_output.write_out, cli/app.run): the same lines through
the same consoles (cli/_console.PlainLines), exit 1 for a wrong declaration or a file name that would
leave DIR, 3 for DIR refused or a failing disk, 130 on Ctrl-C, a closed stdout pipe ending the command
with status 1. Anything else the app would answer (another spelling, an `--out` it refuses, help,
completion) goes to the app. test_render_fast_path.py runs both ways on the same command lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from clusterforge.cli._console import PlainLines
from clusterforge.cli.validation import plain_words, run_plain
from clusterforge.gcpause import paused_gc

if TYPE_CHECKING:
    from clusterforge.plan import Plan

__all__ = ["fast_argv", "render_main", "rendered_files", "SWITCHES_ONLY_HELP"]

SWITCHES_ONLY_HELP = ("write only switches/ (every switch's config files and the fabric-wide ones), not the Ansible"
                      " tree, assets or scheduler files; DIR's other entries stay as they are")


def rendered_files(plan: Plan, switches_only: bool) -> dict[str, str]:
    """What `render` writes: everything (render.render_all), or with `--switches-only` the switches/ part of it
    alone, the same bytes (render.switches.render_switches) without the work of the rest."""
    if switches_only:
        from clusterforge.render.switches import render_switches

        return render_switches(plan)
    from clusterforge.render import render_all

    return render_all(plan)


def fast_argv(argv: list[str]) -> tuple[str, Path, bool] | None:
    """(FILE, DIR, switches only) for ``render FILE --out DIR [--switches-only]`` as the app would read it, else
    None (the app runs). The flag is taken as the last word only: after ``--out`` it would be DIR to the app."""
    if not argv or argv[0] != "render":
        return None
    words = argv[1:]
    switches_only = words[-1:] == ["--switches-only"]
    if switches_only:
        words = words[:-1]
    if len(words) == 2 and words[1].startswith("--out="):
        file, raw = words[0], words[1].removeprefix("--out=")
    elif len(words) == 3 and words[1] in ("--out", "-o"):
        file, raw = words[0], words[2]
    else:
        return None
    if not plain_words([file, raw]):
        return None
    from clusterforge.outdir import OutputRefused, check_out_arg

    try:
        return file, check_out_arg(raw), switches_only
    except OutputRefused:  # the app's usage error, worded by click
        return None


def render_main(file: str, out_dir: Path, switches_only: bool = False) -> None:
    """`clusterforge render FILE --out DIR [--switches-only]`, with the app's lines and exit codes."""
    lines = PlainLines()
    # loading, planning and rendering make no reference cycles (clusterforge.gcpause): cli/validation.run_plain
    run_plain(lambda: _render(Path(file), out_dir, switches_only, lines), lines)


def _render(file: Path, out_dir: Path, switches_only: bool, lines: PlainLines) -> int:
    with paused_gc():  # the model, planner and renderer modules: thousands of classes, no garbage
        from clusterforge.loading import DeclarationError, load_and_plan
        from clusterforge.outdir import OutputRefused, PathEscape, write_tree

    try:
        _, plan, _ = load_and_plan(file)
    except DeclarationError as exc:
        for problem in exc.problems:
            lines.err(str(problem))
        return 1
    files = rendered_files(plan, switches_only)
    try:
        write_tree(out_dir, files)
    except PathEscape as exc:
        lines.err(f"error: {out_dir}: {exc}; nothing was written")
        return 1
    except OutputRefused as exc:
        lines.err(f"error: {exc}")
        return 3
    except OSError as exc:
        lines.err(
            f"error: writing {out_dir}: {exc.strerror or exc}"
            f"{f' ({exc.filename})' if exc.filename else ''}; nothing under it was replaced"
        )
        return 3
    lines.out(f"wrote {len(files)} files under {out_dir}")
    return 0
