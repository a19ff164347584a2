"""Numbers that are numbers: the types of every declared integer and number field, and their error wording.

pydantic's lax mode reads YAML 1.1 habits as numbers: ``true`` as 1, ``"4"`` as 4, ``1.0`` as 1
(``max_sus: yes``). A declaration's count or limit takes a YAML number only, so every numeric field of a
Declared model is ``Integer`` or ``Number`` (pydantic's strict int and float: a boolean, a string, or a decimal
where a whole number belongs is refused at the field). ``Number`` takes an integer too (``voltage_v: 415``).
A ``Literal`` of integers has no strict mode: it carries ``WHOLE`` as well (``Annotated[Literal[1, 3], WHOLE]``).
tests/unit/test_model_numbers.py holds every numeric field of every Declared model to this.

Strictness is part of the schema pydantic-core builds, so it costs no Python call per field (a ``"*"`` field
validator on the base class did, and signature inspection for every field when the schema was built).
The loader words the strict types' errors with ``number_message``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Strict

__all__ = ["Integer", "Number", "WHOLE", "number_message"]

Integer = Annotated[int, Strict()]
Number = Annotated[float, Strict()]


def number_message(kind: str, value: Any) -> str | None:
    """What is wrong with VALUE where an integer or number (KIND) belongs; None when it is not one of the YAML
    habits above (the library's own message stands)."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()} is not a valid {kind}; write the {kind} itself (unquoted, e.g. 2)"
    if isinstance(value, str):
        return f"a string is not a valid {kind}; write the {kind} itself (unquoted, e.g. 2)"
    if isinstance(value, float) and kind == "integer":
        return f"{value!r} is not a valid integer; write a whole number without a decimal point"
    return None


def _whole(value: Any) -> Any:
    message = number_message("integer", value)
    if message:
        raise ValueError(message)
    return value


WHOLE = BeforeValidator(_whole)
