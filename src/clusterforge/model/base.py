"""Common base for declaration models: frozen, strict about unknown keys, numbers that are numbers."""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

__all__ = ["Declared"]


@cache
def _numeric(annotation: Any) -> str:
    """'integer' / 'number' when the field holds a number (possibly optional, or a Literal of ints), else ''."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _numeric(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        kinds = {_numeric(arg) for arg in typing.get_args(annotation) if arg is not type(None)}
        return "integer" if kinds == {"integer"} else ("number" if kinds and "" not in kinds else "")
    if origin is typing.Literal:
        values = typing.get_args(annotation)
        return "integer" if values and all(type(v) is int for v in values) else ""
    if annotation is int:
        return "integer"
    if annotation is float:
        return "number"
    return ""


class Declared(BaseModel):
    """Every declaration object is immutable, rejects keys it does not know, and refuses inf/nan.

    A number field takes a YAML number only: pydantic's lax mode would read ``true`` as 1, ``"4"`` as 4 and
    ``1.0`` as 1 (YAML 1.1 habits: ``max_sus: yes``), so a boolean, a string, or a decimal where a count belongs
    is refused at the field.
    """

    # defer_build: a class's validator is built when it is first used, so `validate` builds one validator for
    # the whole ClusterSpec instead of one per class at import (each of which re-embedded its children's).
    # A default that is an instance of a Declared class would build that class at import: such defaults are
    # default_factory (tests/unit/test_model_deferred.py).
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True, allow_inf_nan=False,
                              str_max_length=4096, defer_build=True)

    @field_validator("*", mode="before")
    @classmethod
    def _numbers_are_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, bool | str) and info.field_name is not None:
            field = cls.model_fields.get(info.field_name)
            kind = _numeric(field.annotation) if field is not None else ""
            if kind:
                got = f"the boolean {str(value).lower()}" if isinstance(value, bool) else "a string"
                raise ValueError(f"{got} is not a valid {kind}; write the {kind} itself (unquoted, e.g. 2)")
        elif isinstance(value, float) and info.field_name is not None:
            field = cls.model_fields.get(info.field_name)
            if field is not None and _numeric(field.annotation) == "integer":  # lax mode reads 1.0 as 1
                raise ValueError(f"{value!r} is not a valid integer; write a whole number without a decimal point")
        return value
