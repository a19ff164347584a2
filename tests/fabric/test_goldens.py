"""Rendered switch configs equal the reviewed golden files. Regenerate: scripts/regen-goldens.py."""

from __future__ import annotations

import difflib

import pytest
from golden_cases import CASES, golden_files, rendered

CASE_FILES = [(case, path) for case in CASES for path in sorted(rendered(case))]


@pytest.mark.parametrize("case", list(CASES))
def test_golden_file_set_matches(case):
    assert sorted(golden_files(case)) == sorted(rendered(case)), \
        "rendered files differ from tests/fabric/golden; run scripts/regen-goldens.py and review the diff"


@pytest.mark.parametrize(("case", "path"), CASE_FILES, ids=[f"{c}/{p}" for c, p in CASE_FILES])
def test_rendered_equals_golden(case, path):
    expected = golden_files(case).get(path)
    assert expected is not None, f"no golden for {case}/{path}; run scripts/regen-goldens.py"
    actual = rendered(case)[path]
    diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), "golden", "rendered"))
    assert expected == actual, diff
