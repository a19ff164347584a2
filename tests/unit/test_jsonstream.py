"""The streaming JSON writer writes json.dumps(value, indent=1)'s text: on generated values, on the example
Plans (what `clusterforge plan --format json` writes), and with iterators in place of lists."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterforge.loading import load_and_plan
from clusterforge.render.jsonstream import write_json

ROOT = Path(__file__).parents[2]
EXAMPLES = ("lab.yaml", "roce-128gpu.yaml", "superpod-4su.yaml")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=12))
keys = st.one_of(st.text(max_size=8), st.integers(-5, 5), st.booleans(), st.none(), st.floats(allow_nan=False))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=5)), max_leaves=40)


def written(value) -> str:
    pieces: list[str] = []
    write_json(value, pieces.append)
    return "".join(pieces)


@settings(max_examples=400, deadline=None)
@given(values)
def test_matches_the_standard_encoder(value):
    assert written(value) == json.dumps(value, indent=1)


def test_iterators_are_written_as_lists_while_consumed():
    rows = ({"n": n, "name": f"r{n}"} for n in range(3))
    assert written({"rows": rows, "none": iter(())}) == json.dumps({"rows": [{"n": n, "name": f"r{n}"}
                                                                             for n in range(3)], "none": []}, indent=1)


def test_rows_of_equal_values_of_other_types_are_not_confused():
    """1 == True == 1.0: a row layout made for one key set never writes another type's keys or values."""
    for row in ({"a": 1}, {"a": True}, {"a": 1.0}, {1: "x"}, {True: "x"}, {1.0: "x"}, {"%s": "%d", "a%": None}):
        for _ in range(2):
            assert written([row]) == json.dumps([row], indent=1)


def test_unknown_types_are_refused():
    with pytest.raises(TypeError, match="not JSON serializable"):
        written({"a": {1, 2}})


@pytest.mark.parametrize("example", EXAMPLES)
def test_plan_json_is_the_plans_dict(example: str):
    _, plan, _ = load_and_plan(ROOT / "inventory" / example)
    assert written(plan.json_fields()) == json.dumps(plan.to_dict(), indent=1)


def test_plan_command_writes_the_plans_dict():
    _, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    argv = [sys.executable, "-m", "clusterforge.cli", "plan", "inventory/lab.yaml", "--format", "json"]
    result = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout == json.dumps(plan.to_dict(), indent=1) + "\n"
