"""Common base for declaration models: frozen, strict about unknown keys."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Declared"]


class Declared(BaseModel):
    """Every declaration object is immutable, rejects keys it does not know, and refuses inf/nan."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True, allow_inf_nan=False,
                              str_max_length=4096)
