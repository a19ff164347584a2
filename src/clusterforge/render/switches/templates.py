"""Where the Jinja2 templates live and the one environment that formats them.

Templates are package data (templates/switch/<nos>/), found by clusterforge.paths.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from clusterforge import paths

__all__ = ["templates_dir", "environment", "render_template", "HEADER_TEXT"]

HEADER_TEXT = "Rendered by clusterforge from the Plan. Do not edit: change the inventory declaration."


def templates_dir() -> Path:
    return paths.templates_dir()


@lru_cache(maxsize=4)
def _environment(root: str) -> Environment:
    env = Environment(
        loader=FileSystemLoader(root),
        undefined=StrictUndefined,  # a missing key is a renderer bug, never an empty line
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["json"] = lambda value: json.dumps(value)
    return env


def environment() -> Environment:
    return _environment(str(templates_dir()))


def render_template(name: str, **context: Any) -> str:
    """One template (path under templates/), with the do-not-edit header every rendered file carries."""
    return environment().get_template(name).render(header=HEADER_TEXT, **context)
