"""Where the Jinja2 templates live and the one environment that formats them.

Templates are package data (templates/switch/<nos>/), found by clusterforge.paths. Jinja2 is imported
when the first template is rendered: EOS and Cumulus are formatted in Python (`_eos/running_config.py`,
`_cumulus/startup_yaml.py`), so a render of those alone never loads it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clusterforge import paths
from clusterforge.render.switches.header import HEADER_TEXT

if TYPE_CHECKING:
    from jinja2 import Environment, Template

__all__ = ["templates_dir", "environment", "render_template", "HEADER_TEXT"]


def templates_dir() -> Path:
    return paths.templates_dir()


@lru_cache(maxsize=4)
def _environment(root: str) -> Environment:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

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


@lru_cache(maxsize=256)
def _template(root: str, name: str) -> Template:
    """A compiled template, looked up once per process: Environment.get_template stats its file on every
    call (auto_reload), thousands of times in a large render; the files do not change during a command."""
    return _environment(root).get_template(name)


def environment() -> Environment:
    return _environment(str(templates_dir()))


def render_template(name: str, **context: Any) -> str:
    """One template (path under templates/), with the do-not-edit header every rendered file carries."""
    return _template(str(templates_dir()), name).render(header=HEADER_TEXT, **context)
