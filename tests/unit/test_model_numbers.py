"""Every numeric field of every Declared model takes a YAML number only (model/numbers.py).

The first test reads the annotations: an ``int`` or ``float`` anywhere in a field's type (in a list, optional)
must be strict, or a Literal of integers must carry WHOLE, so a field added later with a bare ``int`` fails
here. The second validates each such field of each class with a boolean, a string and a decimal, and reads
the error the loader would print for it.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import Strict, ValidationError

import clusterforge.model as model_package
from clusterforge.model.base import Declared
from clusterforge.model.loader import _message
from clusterforge.model.numbers import WHOLE


def _declared_classes() -> list[type[Declared]]:
    for module in pkgutil.iter_modules(model_package.__path__):
        importlib.import_module(f"clusterforge.model.{module.name}")

    def below(cls: type) -> Iterator[type]:
        for sub in cls.__subclasses__():
            yield sub
            yield from below(sub)

    return sorted(set(below(Declared)), key=lambda c: (c.__module__, c.__qualname__))


def _lax_numbers(annotation: Any, metadata: tuple[Any, ...] = ()) -> list[str]:
    """The numeric parts of ANNOTATION that pydantic would read in lax mode."""
    strict = any(isinstance(m, Strict) and m.strict for m in metadata)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *more = typing.get_args(annotation)
        return _lax_numbers(inner, (*metadata, *more))
    if origin is typing.Literal:
        ints = [v for v in typing.get_args(annotation) if type(v) is int]
        return [repr(annotation)] if ints and WHOLE not in metadata else []
    if origin in (typing.Union, types.UnionType) and {str, bool} & set(typing.get_args(annotation)):
        return []  # a value of several kinds (a BIOS setting: text, number or switch), not a number field
    if origin is not None or isinstance(annotation, types.UnionType):
        return [lax for arg in typing.get_args(annotation) for lax in _lax_numbers(arg)]
    if annotation in (int, float) and not strict:
        return [annotation.__name__]
    return []


def _kind(annotation: Any) -> tuple[str, bool]:
    """('integer' or 'number' or '', whether in a list) for a field's type: a number, optional, a Literal of
    integers, or a list of those."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _kind(typing.get_args(annotation)[0])
    if origin is list:
        return _kind(typing.get_args(annotation)[0])[0], True
    if origin in (typing.Union, types.UnionType):
        kinds = [_kind(arg) for arg in typing.get_args(annotation) if arg is not type(None)]
        return kinds[0] if len(kinds) == 1 else ("", False)
    if origin is typing.Literal:
        return ("integer" if all(type(v) is int for v in typing.get_args(annotation)) else ""), False
    return {int: "integer", float: "number"}.get(annotation, ""), False


def _numeric_fields() -> list[tuple[type[Declared], str, str, bool]]:
    """(class, field, 'integer' or 'number', whether the field is a list) for every number-valued field."""
    return [(cls, name, kind, is_list) for cls in _declared_classes() for name, info in cls.model_fields.items()
            for kind, is_list in [_kind(info.annotation)] if kind]


def test_every_numeric_field_is_strict() -> None:
    classes = _declared_classes()
    assert len(classes) > 40
    lax = [f"{cls.__module__}.{cls.__qualname__}.{name}: {parts}"
           for cls in classes for name, info in cls.model_fields.items()
           if (parts := _lax_numbers(info.annotation, tuple(info.metadata)))]
    assert lax == [], "numeric fields pydantic reads in lax mode (use model.numbers.Integer / Number / WHOLE)"


def test_the_numeric_fields_were_found() -> None:
    fields = _numeric_fields()
    kinds = {kind for _, _, kind, _ in fields}
    assert len(fields) > 150 and kinds == {"integer", "number"}


@pytest.mark.parametrize(("value", "wording"), [
    (True, "the boolean true is not a valid {kind}; write the {kind} itself (unquoted, e.g. 2)"),
    (False, "the boolean false is not a valid {kind}; write the {kind} itself (unquoted, e.g. 2)"),
    ("2", "a string is not a valid {kind}; write the {kind} itself (unquoted, e.g. 2)"),
    (2.0, "2.0 is not a valid integer; write a whole number without a decimal point"),
], ids=["true", "false", "string", "decimal"])
def test_each_numeric_field_refuses_yaml_habits(value: Any, wording: str) -> None:
    wrong = []
    for cls, name, kind, is_list in _numeric_fields():
        if isinstance(value, float) and kind == "number":
            continue  # 2.0 is a number
        loc = (name, 0) if is_list else (name,)
        try:
            cls.model_validate({name: [value] if is_list else value})
            errors: list[Any] = []
        except ValidationError as exc:
            errors = [e for e in exc.errors() if tuple(e["loc"]) == loc]
        expected = wording.format(kind=kind)
        if not errors or not _message(errors[0]).startswith(expected):
            wrong.append(f"{cls.__qualname__}.{name}: {[_message(e) for e in errors]}")
    assert wrong == []


def test_a_number_field_takes_an_integer() -> None:
    from clusterforge.model.site import Feed

    assert Feed.model_validate({"voltage_v": 415, "phases": 3, "amperage_a": 63}).voltage_v == 415.0
