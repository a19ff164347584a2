"""CSV cells a spreadsheet will not run: text starting with = + - @ (or tab/CR) gets a leading apostrophe.

OWASP's CSV-injection guidance: a cell beginning with one of those characters is read as a formula
by Excel/LibreOffice/Sheets. Numbers stay numbers (a negative number is a number, not text).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["cell", "row"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def row(values: Iterable[Any]) -> list[Any]:
    return [cell(value) for value in values]
