"""A faster __init__ for the Plan's frozen, slotted records that are built by the hundred thousand.

A frozen dataclass's generated ``__init__`` sets each field through ``object.__setattr__``, which
looks the attribute up on the class every time: a 512-SU plan builds half a million interfaces
and as many links (a million endpoints), and that was a tenth of its planning time. ``slot_init``
replaces it with one that calls each slot's own setter (the descriptor the class already has), with
the same parameters and defaults; the class stays frozen (assigning a field still raises), its
equality, hash and repr are the dataclass's. Only for slotted frozen dataclasses whose fields have
plain defaults (no default_factory) and no __post_init__.
"""

from __future__ import annotations

import dataclasses
from types import FunctionType
from typing import TypeVar, cast

__all__ = ["slot_init"]

C = TypeVar("C", bound=type)


def slot_init(cls: C) -> C:
    params = getattr(cls, "__dataclass_params__", None)  # every dataclass has them; mypy's type has no field
    if not dataclasses.is_dataclass(cls) or params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: slot_init is for frozen, slotted dataclasses")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: a __post_init__ would not run")
    scope: dict[str, object] = {}
    arguments: list[str] = []
    body: list[str] = []
    for field in dataclasses.fields(cls):
        if field.default_factory is not dataclasses.MISSING or not field.init:
            raise TypeError(f"{cls.__name__}.{field.name}: only plain fields and defaults")
        scope[f"_set_{field.name}"] = cls.__dict__[field.name].__set__  # the slot's own setter
        if field.default is dataclasses.MISSING:
            arguments.append(field.name)
        else:
            scope[f"_default_{field.name}"] = field.default
            arguments.append(f"{field.name}=_default_{field.name}")
        body.append(f"    _set_{field.name}(self, {field.name})")
    exec(f"def __init__(self, {', '.join(arguments)}):\n" + "\n".join(body) + "\n", scope)  # as dataclasses does
    init = cast(FunctionType, scope["__init__"])
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init  # type: ignore[method-assign]  # replacing the generated __init__ is this function's job
    return cls
