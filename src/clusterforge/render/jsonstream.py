"""JSON written as it is encoded: ``json.dumps(value, indent=1)``'s text, byte for byte, handed to ``write``
in pieces, with any iterator in the value written as a list while it is consumed.

`clusterforge plan --format json` of 512 SUs is ~1 GB of text: json.dumps held the whole Plan as dicts and
the whole text at once (3.45 GB), and its indenting encoder is pure Python. Here the Plan's long lists are
generators of one row dict each (Plan.json_fields), so one device's or link's dicts and text exist at a
time. A dict of scalars (most rows: interfaces, link ends) is one %-format whose layout is made once per
shape; anything else takes the general path. tests/unit/test_jsonstream.py compares the text with
json.dumps on generated values and on the example Plans.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from json.encoder import encode_basestring_ascii as _str
from typing import Any

__all__ = ["write_json"]

FLUSH_PIECES = 4096  # pieces gathered before one write (a few hundred KB)
LAYOUT_CACHE_SIZE = 4096  # row shapes kept: a Plan has a few dozen
_LAYOUTS: dict[tuple, str] = {}  # (newline, *keys) -> %-template of the row
_CONSTANTS = {True: "true", False: "false", None: "null"}


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


# the text of a scalar of exactly this type; subclasses and containers take the general path
_ROW_SCALARS: dict[type, Callable[[Any], str]] = {str: _str, int: int.__repr__, float: _float,
                                                  bool: _CONSTANTS.__getitem__, type(None): _CONSTANTS.__getitem__}


def _scalar(value: Any) -> str | None:
    """json's text of a scalar (its checks in its order), or None for a container."""
    if isinstance(value, str):
        return _str(value)
    if value is None or value is True or value is False:
        return _CONSTANTS[value]
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, list | tuple | dict | Iterator):
        return None
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key(key: Any) -> str:
    """json's text of a dict key (str, float, bool, None, int)."""
    if isinstance(key, str):
        return _str(key)
    if isinstance(key, float):
        return _str(_float(key))
    if key is True or key is False or key is None:
        return _str(_CONSTANTS[key])
    if isinstance(key, int):
        return _str(int.__repr__(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _dict_text(value: dict, newline: str) -> str:
    """The whole text of a non-empty dict; its layout is made once per (depth, keys) when every key is a str."""
    shape = (newline, *value)
    template = _LAYOUTS.get(shape)
    if template is None:
        if not all(type(key) is str for key in value):  # 1, 1.0 and True are one key to a tuple
            inner = newline + " "
            return "{" + ",".join([inner + _key(key) + ": " + _text(item, inner) for key, item in value.items()]) \
                + newline + "}"
        inner = newline + " "
        template = "{" + ",".join([inner + _key(key).replace("%", "%%") + ": %s" for key in value]) + newline + "}"
        if len(_LAYOUTS) < LAYOUT_CACHE_SIZE:
            _LAYOUTS[shape] = template
    inner = newline + " "
    get = _ROW_SCALARS.get
    return template % tuple([text(v) if (text := get(type(v))) is not None else _text(v, inner)
                             for v in value.values()])


def _text(value: Any, newline: str) -> str:
    """json.dumps(value, indent=1)'s text of one value whose first line is indented by ``newline``."""
    kind = type(value)
    text = _ROW_SCALARS.get(kind)
    if text is not None:
        return text(value)
    if kind is dict:
        return _dict_text(value, newline) if value else "{}"
    if kind is not list and kind is not tuple:
        scalar = _scalar(value)  # subclasses of the scalars, in json's order; TypeError for an unknown type
        if scalar is not None:
            return scalar
        if isinstance(value, dict):
            return _dict_text(value, newline) if value else "{}"
    inner = newline + " "
    get = _ROW_SCALARS.get
    items = [text(v) if (text := get(type(v))) is not None else _text(v, inner) for v in value]
    return "[" + inner + ("," + inner).join(items) + newline + "]" if items else "[]"


class _Writer:
    def __init__(self, write: Callable[[str], Any]):
        self.write = write
        self.pieces: list[str] = []

    def flush(self) -> None:
        if self.pieces:
            self.write("".join(self.pieces))
            self.pieces.clear()

    def value(self, value: Any, newline: str) -> None:
        text = _scalar(value)
        if text is not None:
            self.pieces.append(text)
        elif isinstance(value, dict):
            self.mapping(value, newline)
        else:
            self.sequence(value, newline)

    def mapping(self, value: dict, newline: str) -> None:
        if not value:
            self.pieces.append("{}")
            return
        inner = newline + " "
        self.pieces.append("{")
        first = True
        for key, item in value.items():
            self.pieces.append(("" if first else ",") + inner + _key(key) + ": ")
            first = False
            self.value(item, inner)
        self.pieces.append(newline + "}")

    def sequence(self, value: Any, newline: str) -> None:
        inner = newline + " "
        first = True
        for item in value:
            self.pieces.append(("[" if first else ",") + inner)
            first = False
            if isinstance(item, Iterator):
                self.sequence(item, inner)
            else:  # one row (a device, a link): its whole text at once
                self.pieces.append(_text(item, inner))
            if len(self.pieces) >= FLUSH_PIECES:
                self.flush()
        self.pieces.append("[]" if first else newline + "]")


def write_json(value: Any, write: Callable[[str], Any]) -> None:
    """Write ``json.dumps(value, indent=1)``'s text through ``write``; iterators are written as lists."""
    writer = _Writer(write)
    writer.value(value, "\n")
    writer.flush()
