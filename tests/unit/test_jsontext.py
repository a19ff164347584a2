"""The JSON writer is byte-identical to json.dumps(indent=4, sort_keys=True) on config-shaped values."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterforge.render.jsontext import to_json

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)), max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(values)
def test_matches_the_standard_encoder(value):
    assert to_json(value) == json.dumps(value, indent=4, sort_keys=True) + "\n"


def test_tuples_are_lists_and_unknown_types_are_refused():
    assert to_json({"a": (1, "x")}) == json.dumps({"a": [1, "x"]}, indent=4, sort_keys=True) + "\n"
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        to_json({"a": {1, 2}})


def test_remembered_rows_never_stand_for_equal_values_of_another_type():
    """1 == True == 1.0 and 0 == False: a row written once is not the text of an equal row of other types."""
    for row in ({"a": 1, "b": "x"}, {"a": True, "b": "x"}, {"a": 1.0, "b": "x"}, {"a": 0}, {"a": False},
                {"b": "x", "a": 1}, {"%s": "%d", "a%": None}):
        for _ in range(2):  # the second time from whatever the writer remembered
            assert to_json([row]) == json.dumps([row], indent=4, sort_keys=True) + "\n"
