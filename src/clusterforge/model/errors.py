"""Problems found in a declaration, each pointing at file:line:col and a field path."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Problem", "DeclarationError", "field_path", "shown"]

SHOWN_CHARS = 60  # an echoed value is cut here: a 1 MB string must not become a 1 MB error line
_PLAIN_PART = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


def shown(value: Any) -> str:
    """A value as it may appear in an error line: repr (control characters escaped), bounded."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}…({len(text)} chars)"


def field_path(loc: Iterable[Any]) -> str:
    """a.b.0.c; a part that is not a plain identifier (a hostile key) is shown quoted and bounded."""
    return ".".join(str(p) if _PLAIN_PART.fullmatch(str(p)) else shown(p) for p in loc)


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    column: int
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        text = f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"
        return text.replace("\n", "\\n").replace("\r", "\\r")  # one problem, one line


class DeclarationError(Exception):
    """Raised with every problem found, not just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
