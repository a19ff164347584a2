"""Common base for declaration models: frozen, strict about unknown keys, numbers that are numbers."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Declared"]


class Declared(BaseModel):
    """Every declaration object is immutable, rejects keys it does not know, and refuses inf/nan.

    A number field takes a YAML number only: its type is model.numbers' ``Integer`` or ``Number`` (strict), so a
    boolean, a string, or a decimal where a count belongs is refused at the field (test_model_numbers.py).
    """

    # defer_build: a class's validator is built when it is first used, so `validate` builds one validator for
    # the whole ClusterSpec instead of one per class at import (each of which re-embedded its children's).
    # A default that is an instance of a Declared class would build that class at import: such defaults are
    # default_factory=Class.model_construct, which gives what Class() gives (pydantic validates no default)
    # without building a validator for Class alone (tests/unit/test_model_deferred.py).
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True, allow_inf_nan=False,
                              str_max_length=4096, defer_build=True)
