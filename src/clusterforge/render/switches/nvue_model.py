"""Check a Cumulus startup.yaml against NVUE's object model, as NVIDIA documents it.

schemas/nvue_object_model.json records, for every path clusterforge writes, what NVIDIA's NVUE
command reference says the path accepts: the attribute names at each level, the grammar of each
identifier (`interface <interface-id>`, `dscp <qos-dscp-id>`) and each value's type or range
(`link mtu 552-9216`, `qos roce mode (lossy|lossless)`). A key the model does not have, an
identifier or value outside its grammar, is a problem, reported with its path.

NVUE writes on/off unquoted; a YAML 1.1 reader (PyYAML) reads them as booleans, so booleans are
compared as on/off.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from clusterforge.render.switches.nvue_syntax import DEFAULT_SYNTAX, model_for

__all__ = ["nvue_problems", "nvue_model", "MODEL_PATH"]

MODEL_PATH = Path(__file__).parent / "schemas" / "nvue_object_model.json"
_VALUE_KEYS = {"type", "enum", "range", "union", "regex", "number", "multiple_of"}


@cache
def nvue_model() -> dict[str, Any]:
    return json.loads(MODEL_PATH.read_text())


def _scalar(value: Any) -> Any:
    if value is True:
        return "on"
    if value is False:
        return "off"
    return value


def _value_problem(value: Any, spec: dict[str, Any]) -> str | None:
    types = nvue_model()["types"]
    if "type" in spec:
        return _value_problem(value, types[spec["type"]])
    if "union" in spec:
        return None if any(_value_problem(value, s) is None for s in spec["union"]) else \
            f"{value!r} is none of: " + "; ".join(_describe(s) for s in spec["union"])
    if "enum" in spec:
        return None if str(value) in spec["enum"] else f"{value!r} is not one of {'|'.join(spec['enum'])}"
    if "range" in spec:
        lo, hi = spec["range"]
        if isinstance(value, bool) or not isinstance(value, int) and not (isinstance(value, str) and value.isdigit()):
            return f"{value!r} is not an integer {lo}-{hi}"
        if not lo <= int(value) <= hi:
            return f"{value} is outside {lo}-{hi}"
        if "multiple_of" in spec and int(value) % spec["multiple_of"]:
            return f"{value} is not a multiple of {spec['multiple_of']}"
        return None
    if "regex" in spec:
        return None if isinstance(value, str) and re.fullmatch(spec["regex"], value) else \
            f"{value!r} does not match /{spec['regex']}/"
    if spec.get("number"):
        return None if isinstance(value, int | float) and not isinstance(value, bool) else f"{value!r} is not a number"
    return None


def _describe(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return "|".join(spec["enum"])
    if "range" in spec:
        return f"{spec['range'][0]}-{spec['range'][1]}"
    return spec.get("type", "value")


def _is_value(spec: dict[str, Any]) -> bool:
    # a value spec's keys hold strings/lists; an object's keys (an attribute may be called "type") hold specs
    return any(key in _VALUE_KEYS and not isinstance(val, dict) for key, val in spec.items())


class _Walker:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def node(self, path: str, value: Any, spec: dict[str, Any]) -> None:
        if _is_value(spec):
            problem = _value_problem(_scalar(value), spec)
            if problem:
                self.problems.append(f"{path}: {problem}")
            return
        if not isinstance(value, dict):
            self.problems.append(f"{path}: NVUE has an object here, not {value!r}")
            return
        ids = [k for k in spec if k.startswith("<")]
        for key, child in value.items():
            where = f"{path} {key}".strip()
            if ids:  # a collection: every key is an identifier of the documented grammar
                child_spec = spec[ids[0]]
                problem = _value_problem(_scalar(key), {"type": child_spec["id"]} if child_spec["id"] in
                                         nvue_model()["types"] else {"enum": []})
                if problem:
                    self.problems.append(f"{where}: identifier {problem}")
                    continue
                self.node(where, child, {k: v for k, v in child_spec.items() if k != "id"})
            elif key in spec:
                self.node(where, child, spec[key])
            else:
                allowed = ", ".join(sorted(k for k in spec if k != "id")) or "nothing"
                self.problems.append(f"{where}: not in NVUE's object model here (allowed: {allowed})")


_SYNTAX = re.compile(r"Cumulus Linux (5\.\d+) and (?:later|earlier) NVUE syntax")


def nvue_problems(startup_yaml: str, syntax: str | None = None) -> list[str]:
    """Every departure from NVUE's documented object model, as `path: message` lines (empty = valid).
    The model is that of `syntax`, else of the syntax the file's header comment names (default 5.15)."""
    try:
        doc = yaml.safe_load(startup_yaml)
    except yaml.YAMLError as exc:
        return [f"<file>: not YAML: {exc}"]
    if not isinstance(doc, list) or not all(isinstance(item, dict) and len(item) == 1 for item in doc):
        return ["<file>: startup.yaml is a list of one-key items (header, set)"]
    if syntax is None:
        named = _SYNTAX.search(startup_yaml.split("\n- ", 1)[0])
        syntax = named.group(1) if named else DEFAULT_SYNTAX
    model = model_for(nvue_model(), syntax)
    walker = _Walker()
    seen = [next(iter(item)) for item in doc]
    if seen[:1] != ["header"] or "set" not in seen:
        walker.problems.append(f"<file>: expected a header item then a set item, found {seen}")
    for item in doc:
        (kind, body), = item.items()
        if kind not in ("header", "set"):
            walker.problems.append(f"{kind}: not a startup.yaml item (header, set)")
            continue
        walker.node(kind, body, model[kind])
    return walker.problems
