"""mypy over plan/, render/ and nos/ ([tool.mypy] in pyproject.toml) finds nothing: the typed seams hold.

`make test` runs mypy itself too; this test makes `pytest tests/unit` (what a change is checked with before it
merges) report a type error with its file and line as well."""

from __future__ import annotations

import os
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_finds_no_errors_in_the_planners_and_renderers() -> None:
    cwd = Path.cwd()
    os.chdir(ROOT)  # the configuration's `files` are relative to the checkout
    try:
        report, errors, status = api.run([])
    finally:
        os.chdir(cwd)
    assert status == 0, report + errors
    assert report.startswith("Success: no issues found")
