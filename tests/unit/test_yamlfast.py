"""The fast YAML path (model/yamlfast.py) against the reference (ruamel, model/yamlrt.py): whenever the fast path
accepts a text, the reference reads the same data (values and kinds) with the same positions; the examples
take the fast path; every text the reference refuses is declined, so its error is the one the user sees."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT
from test_hostile_fields import FIELDS
from test_hostile_inputs import EDITS

from clusterforge.model.errors import DeclarationError
from clusterforge.model.loader import SourceMap, _parse_reference
from clusterforge.model.yamlfast import load_plain
from clusterforge.model.yamlsafe import MAX_DEPTH, MAX_NODES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "inventory").glob("*.yaml")) + sorted((ROOT / "inventory" / "catalog").glob("*.yaml"))


def _kind(value: object) -> object:
    """A value with its kind: ruamel's int and float subclasses count as int and float (the model converts)."""
    if isinstance(value, dict):
        return {key: _kind(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_kind(item) for item in value]
    if isinstance(value, bool) or value is None:
        return value
    for kind in (int, float, str):
        if isinstance(value, kind):
            return (kind.__name__, kind(value))
    return ("other", type(value).__name__, value)


def _reference(text: str) -> tuple[object, dict] | None:
    """The reference's (data, positions), or None when it refuses the text."""
    source = SourceMap()
    try:
        data = _parse_reference(text, "f.yaml", (), source)
    except DeclarationError:
        return None
    return _kind(data), {loc: (line, col) for loc, (_, line, col) in source._positions.items() if loc}


def _agree(text: str) -> bool:
    """True when the fast path accepted the text (and then gave the reference's result exactly)."""
    fast = load_plain(text, ())
    if fast is None:
        return False
    reference = _reference(text)
    assert reference is not None, f"fast path accepted a text the reference refuses:\n{text[:400]}"
    data, positions = fast
    assert _kind(data) == reference[0]
    assert {loc: (line, col) for loc, line, col in positions} == reference[1]
    return True


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_take_the_fast_path_and_agree(path: Path):
    assert _agree(path.read_text()), f"{path.name} fell back to the reference loader"


@pytest.mark.parametrize("scalar", [
    "5", "-5", "+5", "0", "-0", "00", "017", "0o17", "0x1F", "0b101", "1_000", "100000000000000000000",
    "1.5", "-1.5", "1.50", "0.1", "01.5", "1.", ".5", "1e3", "1.5e3", "1.5E-3", ".inf", "-.inf", ".nan",
    "10.0.0.1", "10.0.0.0/8", "2001:db8::1", "1:20", "2024-01-01", "2024-1-1 10:00:00", "2024-01-01x",
    "true", "True", "TRUE", "tRue", "false", "yes", "no", "on", "off", "y", "n", "~", "null", "Null", "NULL",
    "nulls", "<<", "=", "==", "_", "-", "400G", "2x200", "eth0", "a b", "a: b", "'q'", '"q\\tx"', "'it''s'",
    '"\\u00e9"', "é", "日本", "a # c", "[1, 2]", "{a: 1}", "[]", "{}", "|\n  lit\n", ">\n  fold\n",
    "!!str 1", "! x", "&a 1", "*a", "multi\n  line", '"multi\n  line"',
])
def test_scalars_agree(scalar: str):
    _agree(f"k: {scalar}\nother: [x, {scalar}]\n" if "\n" not in scalar else f"k: {scalar}")


def test_hostile_edits_agree():
    cases = [LAB_TEXT.replace(case[1], case[2], 1) for case in EDITS]
    cases += [LAB_TEXT.replace(case[1], case[2], 1) for case in FIELDS]
    assert sum(_agree(text) for text in cases) > len(cases) // 2  # most edits are values the model refuses


@pytest.mark.parametrize("text", [
    "a: 1\na: 2\n", "a: &x 1\nb: *x\n", "a: !!int 1\n", "%YAML 1.1\n---\na: yes\n", "<<: {a: 1}\n",
    "? [a]\n: 1\n", "1: a\n", "true: a\n", "null: a\n", "a: 1\n---\nb: 2\n", "", "a: [1,\n", "\ta: 1\n",
    "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "[" * 100_000, "a: [" + "1, " * MAX_NODES + "1]\n",
])
def test_what_the_reference_must_word_is_declined(text: str):
    assert load_plain(text, ()) is None


def test_at_the_limits_agree():
    assert _agree("[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1))
    assert load_plain("[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH, ()) is None
    assert _agree("[" + "1, " * (MAX_NODES - 2) + "1]")
    assert load_plain("[" + "1, " * (MAX_NODES - 1) + "1]", ()) is None


_NOISE = list(":-[]{},#'\"&*!|>%@`?\t \n\\x1.0") + ["\n  ", ": ", "- ", "  ", "\n-"]


def test_mutated_declarations_agree_or_decline():
    """Random edits of the lab inventory and a catalog file: the fast path never accepts what the reference
    refuses, and never reads anything differently (seeded: the same 400 texts every run)."""
    rng = random.Random(28)
    bases = [LAB_TEXT, (ROOT / "inventory" / "catalog" / "pdus.yaml").read_text()]
    accepted = 0
    for _ in range(400):
        text = rng.choice(bases)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text))
            action = rng.random()
            if action < 0.4:
                text = text[:at] + rng.choice(_NOISE) + text[at:]
            elif action < 0.7:
                text = text[:at] + text[at + rng.randint(1, 4):]
            else:
                line_start = text.rfind("\n", 0, at) + 1
                line_end = text.find("\n", at) + 1 or len(text)
                text = text[:line_start] + text[line_start:line_end] * 2 + text[line_end:]
        accepted += _agree(text)
    assert accepted > 50  # the comparison ran on accepted texts, not only on declined ones
