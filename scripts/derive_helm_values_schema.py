#!/usr/bin/env python3
"""Derive a strict JSON Schema from a Helm chart's documented values.yaml.

    scripts/derive_helm_values_schema.py VALUES.yaml --source "chart@version (commit)" > schema.json

A chart documents its values by their defaults (and by commented-out keys such as
``# kubeletRootDir: ""``). Every key the chart documents becomes a property with the type of its
default; a mapping that documents keys refuses any other key (a misspelt or moved value is an
error, not silently ignored); an empty mapping ``{}`` and a ``null`` default stay free-form; lists
keep their type only. Commented-out keys are allowed with the type of their example value.
The schema is data derived from the chart, not a copy of it: only key names and types carry over.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

_KEY_LINE = re.compile(r"^(\s*)([A-Za-z_][\w.-]*):(?:\s+(.*))?$")
_COMMENT_KEY_LINE = re.compile(r"^(\s*)#(\s*)([A-Za-z_][\w.-]*):(?:\s+(.*))?$")


def _scalar_type(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, list):
        return {"type": "array"}
    if isinstance(value, dict):
        return {"type": "object"}  # free-form: {} or an example whose keys are not the contract
    return {}


def schema_of(value: Any) -> dict[str, Any]:
    """The strict schema of one documented default."""
    if isinstance(value, dict) and value:
        return {
            "type": "object",
            "properties": {str(k): schema_of(v) for k, v in value.items()},
            "additionalProperties": False,
        }
    return _scalar_type(value)


def _comment_value_type(text: str | None) -> dict[str, Any]:
    text = (text or "").split(" #", 1)[0].strip()
    if text in ("", "|", "|-", ">", ">-"):
        # a bare "key:" heads a commented mapping: its commented children become its properties
        return {"type": "string"} if text else {"type": "object", "properties": {}}
    try:
        return _scalar_type(yaml.safe_load(text))
    except yaml.YAMLError:
        return {"type": "string"}


def documented_comment_keys(text: str) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """(path, schema) of every commented-out key, nested by the indentation inside the comment."""
    stack: list[tuple[int, str]] = []
    found = []
    for line in text.splitlines():
        if match := _KEY_LINE.match(line):
            indent, key = len(match.group(1)), match.group(2)
            comment = False
        elif match := _COMMENT_KEY_LINE.match(line):
            indent = len(match.group(1)) + max(len(match.group(2)) - 1, 0)
            key, comment = match.group(3), True
        else:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = (*(k for _, k in stack), key)
        stack.append((indent, key))
        if comment and key.upper() != key:  # "NOTE:" and "REQUIREMENT:" are prose
            found.append((path, _comment_value_type(match.group(4))))
    return found


def _add_documented(schema: dict[str, Any], path: tuple[str, ...], leaf: dict[str, Any]) -> None:
    node = schema
    for depth, key in enumerate(path):
        if node.get("type") != "object" or "properties" not in node:
            return  # free-form parent: nothing to add
        props = node["properties"]
        if key not in props:
            last = depth == len(path) - 1
            props[key] = leaf if last else {"type": "object", "properties": {}}
        node = props[key]


def derive(values_text: str, source: str) -> dict[str, Any]:
    values = yaml.safe_load(values_text) or {}
    schema = schema_of(values)
    for path, leaf in documented_comment_keys(values_text):
        _add_documented(schema, path, leaf)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": f"Derived by scripts/derive_helm_values_schema.py from the documented values of {source}.",
        **schema,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("values", type=Path)
    parser.add_argument("--source", required=True, help="chart, version and commit the values come from")
    args = parser.parse_args(argv)
    json.dump(derive(args.values.read_text(), args.source), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
