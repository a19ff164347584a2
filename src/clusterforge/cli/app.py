"""The `clusterforge` command: every command group, registered explicitly, and the exit-code rules.

Exit codes: 0 ok, 1 the declaration (or the cluster) is wrong, 2 usage error, 3 environment problem.
"""

from __future__ import annotations

import sys

import typer

from clusterforge.cli import apply, core, lab, ops, report, verify
from clusterforge.cli._common import err, print_problems, say
from clusterforge.loading import DeclarationError

__all__ = ["app", "main"]

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Infrastructure as code for AI GPU clusters: declare, plan, apply, verify.")
for _group in (core, lab, apply, ops, verify, report):  # the order of `clusterforge --help`
    _group.register(app)


def main() -> None:
    try:
        app()
    except DeclarationError as exc:
        print_problems(exc.problems)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as exc:
        say(err, f"error: {exc}")
        sys.exit(3)
