"""Where the Jinja2 templates live and the one environment that formats them.

Templates are repository data (templates/switch/<nos>/), found from this package's location
(src/clusterforge/render/switches -> <repo>/templates) unless CLUSTERFORGE_TEMPLATES names
another directory.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

__all__ = ["templates_dir", "environment", "TemplatesNotFound"]


class TemplatesNotFound(RuntimeError):
    pass


def templates_dir() -> Path:
    override = os.environ.get("CLUSTERFORGE_TEMPLATES")
    return Path(override) if override else _repo_templates()


@lru_cache(maxsize=1)
def _repo_templates() -> Path:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "templates"
        if (candidate / "switch").is_dir():
            return candidate
    raise TemplatesNotFound(f"no templates/switch directory above {Path(__file__).resolve().parent};"
                            " set CLUSTERFORGE_TEMPLATES")


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
