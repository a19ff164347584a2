"""Common base for declaration models: frozen, strict about unknown keys."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Declared"]


class Declared(BaseModel):
    """Every declaration object is immutable and rejects keys it does not know."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)
