"""The entry point (``clusterforge = clusterforge.cli:main``): `clusterforge --version` answered before
anything is imported, every other command line handed to the typer app (clusterforge.cli.app).

Start-up is part of every command's time: this module imports nothing beyond the standard library's
``sys``, and the command modules import what a command needs inside the command (test_cli_imports.py).
`clusterforge validate FILE`, a command line with nothing for the app to parse, runs without it
(cli/validation.validate_main): the same lines and exit codes, a third less start-up; so does
`clusterforge render FILE --out DIR` (cli/rendering.render_main).
"""

from __future__ import annotations

import os
import sys

__all__ = ["main", "version"]


def version() -> str:
    """The package version: ``clusterforge.__version__``, which a unit test keeps equal to pyproject.toml's."""
    return sys.modules["clusterforge"].__version__  # the package this module is part of: loaded


def main() -> None:
    if sys.argv[1:] == ["--version"]:  # the same line the app's eager --version option prints
        sys.stdout.write(f"clusterforge {version()}\n")
        return
    # pydantic looks for plugins in every installed distribution's entry points when the first model
    # is built (tens of ms on each command); clusterforge uses none. An explicit setting is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from clusterforge.cli.validation import fast_argv

    file = fast_argv(sys.argv[1:])
    if file is not None:  # `validate FILE`: no option to parse, so no typer app (cli/validation)
        from clusterforge.cli.validation import validate_main

        validate_main(file)
        return
    from clusterforge.cli.rendering import fast_argv as render_argv

    render = render_argv(sys.argv[1:])
    if render is not None:  # `render FILE --out DIR`: likewise (cli/rendering)
        from clusterforge.cli.rendering import render_main

        render_main(*render)
        return
    from clusterforge.gcpause import paused_gc

    with paused_gc():  # typer, Rich and the command modules: thousands of objects, no garbage to look for
        from clusterforge.cli.app import run
    run()
