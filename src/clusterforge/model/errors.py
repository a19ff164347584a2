"""Problems found in a declaration, each pointing at file:line:col and a field path."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Problem", "DeclarationError"]


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    column: int
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class DeclarationError(Exception):
    """Raised with every problem found, not just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
