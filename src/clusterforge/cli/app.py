"""The `clusterforge` command: every command group, registered explicitly, and the exit-code rules.

Exit codes: 0 ok, 1 the declaration (or the cluster) is wrong, 2 usage error, 3 environment problem.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TypeGuard

import typer

from clusterforge.cli import (
    accept,
    apply,
    core,
    drift,
    engine,
    export,
    health,
    helptext,
    ib,
    kube,
    lab,
    locks,
    ops,
    provision,
    replace,
    report,
    roll,
    sot,
    stacks,
    verify,
)
from clusterforge.cli._common import err, out, print_problems, say
from clusterforge.cli.launch import main, version

if TYPE_CHECKING:
    from clusterforge.model.errors import DeclarationError

__all__ = ["app", "main", "run", "version"]

# rich_markup_mode=None: help strings are shown as written; Rich markup would eat "[default: ...]".
# add_completion: --install-completion / --show-completion for bash, zsh, fish and PowerShell.
app = typer.Typer(add_completion=True, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="Infrastructure as code for AI GPU clusters: declare, plan, apply, verify.")


def _print_version(value: bool) -> None:
    if value:
        say(out, f"clusterforge {version()}")
        raise typer.Exit()


@app.callback()
def _root(show_version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                            help="print the version and exit")) -> None:
    """Infrastructure as code for AI GPU clusters: declare, plan, apply, verify."""


# the order of `clusterforge --help`
for _group in (core, lab, apply, stacks, locks, engine, kube, provision, drift, ops, replace, roll, health, verify,
               accept, report, export, sot, ib):
    _group.register(app)
helptext.apply(app)


def _declaration_error(exc: Exception) -> TypeGuard[DeclarationError]:
    # the model is imported by the commands that load a declaration, never before: a DeclarationError
    # can only exist once its module is loaded
    errors = sys.modules.get("clusterforge.model.errors")
    return errors is not None and isinstance(exc, errors.DeclarationError)


def run() -> None:
    """The app with the exit-code rules (clusterforge.cli.launch.main calls it)."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        if _declaration_error(exc):
            print_problems(exc.problems)
            sys.exit(1)
        if not isinstance(exc, OSError):
            raise
        say(err, f"error: {exc}")
        sys.exit(3)
