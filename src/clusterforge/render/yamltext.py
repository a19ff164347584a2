"""Deterministic YAML text for rendered files."""

from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import YAML

__all__ = ["to_yaml"]


def to_yaml(data: Any) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False
    yaml.width = 4096
    buffer = io.StringIO()
    buffer.write("---\n")
    yaml.dump(data, buffer)
    return buffer.getvalue()
