"""ruamel's round-trip loader under yamlsafe's limits: the reference reader of declarations (line numbers kept).

Its composer refuses aliases, anchors, explicit tags, merge keys, depth, size and integers past the limits
while composing, before any Python object is built. yamlfast reads most declarations faster and declines the rest to
this loader, so every refusal and YAML error a user sees is worded here (or by ruamel).
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent

from clusterforge.model.yamlsafe import MAX_DEPTH, MAX_NODES, UnsafeInput, oversized_integer

__all__ = ["parse_bounded"]

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _BoundedComposer(Composer):
    """ruamel's composer, refusing aliases, anchors, explicit tags, merge keys, depth, size and integers past the
    limits."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._depth = 0
        self._nodes = 0

    def _refuse(self, event: Any, message: str) -> None:
        mark = event.start_mark
        raise UnsafeInput(message, mark.line + 1, mark.column + 1)

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent):
            self._refuse(event, f"YAML alias *{event.anchor} is not allowed; write the value out")
        if event.anchor is not None:
            self._refuse(event, f"YAML anchor &{event.anchor} is not allowed; write the value out")
        if isinstance(event, ScalarEvent | SequenceStartEvent | MappingStartEvent):
            tag = event.ctag
            if tag is not None and str(tag) != "!":
                self._refuse(event, f"explicit YAML tag {str(tag)!r} is not allowed; a declaration is plain data")
        if isinstance(event, ScalarEvent) and event.style is None:  # plain: resolved, perhaps as an integer
            too_long = oversized_integer(event.value)
            if too_long:
                self._refuse(event, too_long)
        self._nodes += 1
        if self._nodes > MAX_NODES:
            self._refuse(event, f"more than {MAX_NODES} YAML nodes in one file")
        self._depth += 1
        if self._depth > MAX_DEPTH:
            self._refuse(event, f"nested deeper than {MAX_DEPTH} levels")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_mapping_node(self, anchor: Any) -> Any:
        node = super().compose_mapping_node(anchor)
        for key, _ in node.value:
            if str(key.tag) == _MERGE_TAG:
                raise UnsafeInput("YAML merge key '<<' is not allowed; write the keys out",
                                  key.start_mark.line + 1, key.start_mark.column + 1)
            if not hasattr(key, "value") or isinstance(key.value, list):
                raise UnsafeInput("a mapping key must be a plain scalar",
                                  key.start_mark.line + 1, key.start_mark.column + 1)
        return node


def parse_bounded(text: str) -> Any:
    """Round-trip parse (line numbers kept) under the limits; ruamel's own errors propagate."""
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    yaml.Composer = _BoundedComposer
    return yaml.load(text)
