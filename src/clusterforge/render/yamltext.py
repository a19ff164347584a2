"""Deterministic YAML text for rendered files (libyaml's C emitter: fast enough for 100k files)."""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["to_yaml"]

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def to_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=4096,
                     explicit_start=True)
