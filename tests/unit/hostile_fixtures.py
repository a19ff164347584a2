"""Shared by the hostile-input tests: a lab copy beside its catalog, the CLI run in-process, problem-line parsing."""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAB_TEXT = (ROOT / "inventory" / "lab.yaml").read_text()
PROBLEM = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?:(?P<path>[^ ]+): )?(?P<msg>.+)$")


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    @property
    def problems(self) -> list[re.Match]:
        lines = [line for line in self.err.splitlines() if line.strip() and not line.startswith("warning: ")]
        return [PROBLEM.match(line) for line in lines]


def workdir(directory: Path) -> Path:
    """directory with a copy of inventory/catalog, so a declaration written there can name catalog/*.yaml."""
    shutil.copytree(ROOT / "inventory" / "catalog", directory / "catalog", dirs_exist_ok=True)
    return directory


def line_of(text: str, needle: str) -> int:
    assert needle in text, needle
    return text[: text.index(needle)].count("\n") + 1


def run_cli(capsys, *args: str) -> Outcome:
    """`clusterforge ARGS` in this process: any exception but SystemExit escapes and fails the test."""
    from clusterforge.cli import main

    capsys.readouterr()
    saved = sys.argv
    sys.argv = ["clusterforge", *args]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = saved
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def assert_refused(outcome: Outcome, file: Path | str, line: int | None, field: str, message: str) -> None:
    """Exit 1, no traceback, every stderr line FILE:LINE:COL: [field: ]message, one of them the expected one."""
    assert outcome.code == 1, (outcome.code, outcome.out[-2000:], outcome.err[-2000:])
    assert "Traceback" not in outcome.err + outcome.out
    problems = outcome.problems
    assert problems and all(problems), f"unlocated lines in {outcome.err!r}"
    name = Path(file).name
    hits = [m for m in problems
            if Path(m["file"]).name == name and (m["path"] or "") == field and message in m["msg"]
            and (line is None or int(m["line"]) == line)]
    assert hits, f"expected {name}:{line}: {field}: ...{message}... in:\n{outcome.err}"
