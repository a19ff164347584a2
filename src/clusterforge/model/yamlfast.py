"""The fast path for reading a declaration: libyaml's C parser (PyYAML's CParser), read event by event into
plain data with the position of every mapping key and sequence item, for the documents whose result it can
vouch for. It declines (returns None) everything else, and the caller then reads the file with ruamel's
round-trip loader (yamlrt.parse_yaml), which stays the reference: every refusal and error a user sees comes
from there, and a document the fast path accepts gives exactly the reference's data and positions
(tests/unit/test_yamlfast.py compares them on the examples, the hostile corpus and mutated copies).

Declined: anything libyaml refuses; any tab; directives, anchors, aliases and explicit tags (yamlsafe refuses them);
integers longer than yamlsafe.MAX_INTEGER_DIGITS (refused there);
depth or node counts past yamlsafe's limits; duplicate keys and keys that are not text; block scalars (| and
>); and every plain scalar that YAML 1.2's core schema, as ruamel 0.18+ resolves it (ruamel/yaml/resolver.py,
implicit_resolvers for (1, 2)), reads as something other than text, null, a boolean, a decimal integer without
leading zeros or a decimal fraction. Numbers come back as plain int and float; ruamel gives its own int and
float subclasses for some (0, 1.5), and the model's fields turn either into the same int or float.

ruamel is pure Python and spent ~0.24 s of the 0.8 s `validate inventory/lab.yaml` on the inventory and its
four catalog files; libyaml reads them in ~5 ms.
"""

from __future__ import annotations

import re
from typing import Any

from clusterforge.model.yamlsafe import MAX_DEPTH, MAX_INTEGER_DIGITS, MAX_NODES

__all__ = ["load_plain", "Positions"]

Positions = list[tuple[tuple[Any, ...], int, int]]  # (field path, 1-based line, 1-based column)

_NULL = frozenset(("", "~", "null", "Null", "NULL"))
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+\Z")
# Every plain scalar that the YAML 1.2 resolver of ruamel could read as a float, int, timestamp, merge key or
# value indicator (a superset is enough: these are declined unless _INT or _FLOAT took them)
_NOT_TEXT = re.compile(r"""(?:
    [-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
   |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
   |[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?
   |[-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
   |[-+]?0b[0-1_]+ | [-+]?0o?[0-7_]+ | [-+]?[0-9_]+ | [-+]?0x[0-9a-fA-F_]+
   |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?.*
   |<< | =
)\Z""", re.X | re.S)


class _Declined(Exception):
    """The fast path cannot vouch for this document: the reference loader reads it."""


_DECLINED = _Declined()


def _scalar(event: Any) -> Any:
    if event.anchor is not None or event.tag is not None:
        raise _DECLINED
    value, style = event.value, event.style
    if not style:  # plain ("" from CParser): resolved
        if value in _NULL:
            return None
        if value in _BOOL:
            return _BOOL[value]
        if _INT.match(value):
            if len(value) > MAX_INTEGER_DIGITS:
                raise _DECLINED
            return int(value)
        if _FLOAT.match(value):
            return float(value)
        if _NOT_TEXT.match(value):
            raise _DECLINED
        return value
    if style in ("'", '"'):
        return value
    raise _DECLINED  # block scalars


def _read(parser: Any, events: Any, loc: tuple[Any, ...], positions: Positions) -> Any:
    """The document's root node, built without recursion (a container is filled as its events arrive)."""
    scalar_event, mapping_start, sequence_start, mapping_end, sequence_end = events
    stack: list[list[Any]] = []  # [container, loc, pending key (mappings), keys seen (mappings)]
    nodes = 0
    root: Any = None
    while True:
        event = parser.get_event()
        kind = type(event)
        if kind is mapping_end or kind is sequence_end:
            frame = stack.pop()
            if kind is mapping_end and frame[2] is not None:
                raise _DECLINED
            if not stack:
                return root
            continue
        nodes += 1
        if nodes > MAX_NODES or len(stack) >= MAX_DEPTH:
            raise _DECLINED
        if kind is scalar_event:
            node = _scalar(event)
            child = None
        elif kind is mapping_start or kind is sequence_start:
            if event.anchor is not None or event.tag is not None:
                raise _DECLINED
            node = {} if kind is mapping_start else []
            child = node
        else:  # an alias, or anything unexpected
            raise _DECLINED
        if not stack:
            if child is None:
                return node
            root = node
            stack.append([node, loc, None, None])
            continue
        frame = stack[-1]
        container = frame[0]
        mark = event.start_mark
        if type(container) is dict:
            key = frame[2]
            if key is None:  # this node is a key
                if child is not None or type(node) is not str or node in container:
                    raise _DECLINED
                frame[2] = node
                positions.append(((*frame[1], node), mark.line + 1, mark.column + 1))
                continue
            container[key] = node
            frame[2] = None
            here = (*frame[1], key)
        else:
            here = (*frame[1], len(container))
            positions.append((here, mark.line + 1, mark.column + 1))
            container.append(node)
        if child is not None:
            stack.append([child, here, None, None])


def load_plain(text: str, loc: tuple[Any, ...]) -> tuple[Any, Positions] | None:
    """(plain data, positions under loc) of a one-document YAML text, or None when the reference must read it."""
    if text.startswith("%") or "\n%" in text:  # a directive (%YAML 1.1 changes the resolution)
        return None
    if "\t" in text:  # libyaml takes tabs inside plain scalars, which ruamel refuses
        return None
    import yaml
    from yaml import events
    from yaml._yaml import CParser

    parser = CParser(text)
    positions: Positions = []
    try:
        if type(parser.get_event()) is not events.StreamStartEvent:
            return None
        start = parser.get_event()
        if type(start) is not events.DocumentStartEvent or start.version is not None or start.tags:
            return None
        data = _read(parser, (events.ScalarEvent, events.MappingStartEvent, events.SequenceStartEvent,
                              events.MappingEndEvent, events.SequenceEndEvent), loc, positions)
        if type(parser.get_event()) is not events.DocumentEndEvent:
            return None
        if type(parser.get_event()) is not events.StreamEndEvent:
            return None
    except (_Declined, yaml.YAMLError):
        return None
    finally:
        parser.dispose()
    return data, positions
