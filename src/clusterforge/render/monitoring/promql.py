"""PromQL text from Plan values: string literals escaped, label matchers built, never pasted."""

from __future__ import annotations

import json
import re

__all__ = ["string", "matchers", "LABEL_NAME"]

LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def string(value: str) -> str:
    """A PromQL string literal of VALUE. PromQL's double-quoted strings take Go's escapes, which JSON's are a
    subset of (backslash, quote, control characters as \\uXXXX); the declaration's grammars admit none of
    them, so this is the second wall."""
    return json.dumps(value, ensure_ascii=True)


def matchers(**labels: str) -> str:
    """``{name="value",...}``: exact-match selectors, label names checked against Prometheus's grammar."""
    for name in labels:
        if not LABEL_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a Prometheus label name")
    return "{" + ",".join(f"{name}={string(value)}" for name, value in labels.items()) + "}"
