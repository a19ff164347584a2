"""Deterministic JSON text: sorted keys, 4-space indent, trailing newline (sonic-cfggen's layout).

Byte-identical to json.dumps(data, indent=4, sort_keys=True) + "\\n" for the str/int/float/bool/None,
dict, list and tuple values configs hold (tests/unit/test_jsontext.py compares them on generated
values). Written out because json's indenting encoder is pure Python and was most of the render
time at scale; this one writes a row of scalars (most of a config) in one join, recurses only
into nested containers, and remembers the text of rows it has seen: per-port QoS, PFC watchdog and
queue rows repeat on every port of every switch, so most rows are one dictionary lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring_ascii as _str
from typing import Any

__all__ = ["to_json"]

_CONSTANTS = {True: "true", False: "false", None: "null"}
# the text of a scalar of exactly this type (subclasses and containers take the slow path)
_ROW_SCALARS: dict[type, Callable[[Any], str]] = {
    str: _str, int: int.__repr__, float: float.__repr__, bool: _CONSTANTS.__getitem__,
    type(None): _CONSTANTS.__getitem__}
ROW_CACHE_SIZE = 50_000  # rows kept (the first ones seen); ~10 MB at most
_ROWS: dict[tuple, str] = {}  # (indent, *row items) -> text: rows repeat across ports and switches
LAYOUT_CACHE_SIZE = 4096  # row shapes kept: a config has a few dozen
_LAYOUTS: dict[tuple, tuple[tuple[str, ...], str]] = {}  # (indent, *keys) -> (sorted keys, %-template)


def to_json(data: Any) -> str:
    text = _scalar(data)
    if text is not None:
        return text + "\n"
    out: list[str] = []
    _emit(data, "\n", out)
    out.append("\n")
    return "".join(out)


def _scalar(value: Any) -> str | None:
    """The text of a scalar, or None for a container."""
    kind = type(value)
    if kind is str:
        return _str(value)
    if kind is int:
        return int.__repr__(value)
    if kind is bool or value is None:
        return _CONSTANTS[value]
    if kind is float:
        return float.__repr__(value)
    if kind is dict or kind is list or kind is tuple:
        return None
    if isinstance(value, str):
        return _str(value)
    if isinstance(value, bool):
        return _CONSTANTS[bool(value)]
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value)
    if isinstance(value, dict | list | tuple):
        return None
    raise TypeError(f"not JSON-serialisable: {value!r}")


def _row(value: dict, newline: str) -> str | None:
    """The text of a dict of string keys and scalar values (a row), or None for any other dict.

    The layout of a row (its sorted keys and the text around the values) is made once per set of
    keys and indent: rows of one shape repeat on every port."""
    shape = (newline, *value)
    layout = _LAYOUTS.get(shape)
    if layout is None:
        if not all(type(key) is str for key in value):
            return None
        order = tuple(sorted(value))
        inner = newline + "    "
        template = "{" + ",".join([inner + _str(key).replace("%", "%%") + ": %s" for key in order]) + newline + "}"
        layout = (order, template)
        if len(_LAYOUTS) < LAYOUT_CACHE_SIZE:
            _LAYOUTS[shape] = layout
    order, template = layout
    try:
        return template % tuple([_ROW_SCALARS[type(v)](v) for v in map(value.__getitem__, order)])
    except KeyError:  # a nested container or a subclass: the general path
        return None


def _emit(value: Any, newline: str, out: list[str]) -> None:
    """Append the text of container `value` whose first line is indented by `newline` (a newline + spaces)."""
    inner = newline + "    "
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        key = (newline, *value.items())
        signature: tuple[Any, ...] | None = key
        try:
            text = _ROWS.get(key)
        except TypeError:  # an unhashable value: a nested container
            text = signature = None
        if text is not None:
            out.append(text)
            return
        text = _row(value, newline)
        if text is not None:
            # only rows of strings are remembered: 1 == True == 1.0 would make other rows equal
            if signature is not None and len(_ROWS) < ROW_CACHE_SIZE and all(
                    type(v) is str for v in value.values()):
                _ROWS[signature] = text
            out.append(text)
            return
        items = sorted(value.items())  # keys are unique: values are never compared
        out.append("{")
        for i, (key, item) in enumerate(items):
            out.append(f"{',' if i else ''}{inner}{_str(key if type(key) is str else str(key))}: ")
            text = _scalar(item)
            if text is None:
                _emit(item, inner, out)
            else:
                out.append(text)
        out.append(newline + "}")
        return
    if not value:
        out.append("[]")
        return
    try:
        out.append("[" + ",".join([inner + _str(item) for item in value]) + newline + "]")
        return
    except TypeError:
        pass
    out.append("[")
    for i, item in enumerate(value):
        out.append(("," if i else "") + inner)
        text = _scalar(item)
        if text is None:
            _emit(item, inner, out)
        else:
            out.append(text)
    out.append(newline + "]")
