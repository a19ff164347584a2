"""The two Rich consoles every command prints through, and plain lines written without Rich where Rich
would write them unchanged.

``stdout_console``/``stderr_console`` are the one definition of the consoles (cli/_common builds them when
the app is imported). ``PlainLines`` is what `clusterforge validate FILE` prints through (cli/validation):
importing Rich costs a few tens of ms, and a line of printable characters comes out of
``Console.print(text, markup=False, highlight=False, ...)`` as the text and a newline, flushed. Any other
line (a tab, a control character, a line that might wrap, a stream that a Rich live display has
redirected) goes through the same Rich console the app would have used (test_plain_lines.py compares the
two). This module imports nothing beyond the standard library until a line needs Rich.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["stdout_console", "stderr_console", "PlainLines", "STDOUT_WIDTH", "emit_json"]

STDOUT_WIDTH = 200  # stdout is not a terminal (a pipe, a file): full rows, not wraps


def stdout_console() -> Console:
    from rich.console import Console

    # emoji=False: Rich would turn ":100:" in "FILE:100:3: field: message" into an emoji
    return Console(emoji=False) if sys.stdout.isatty() else Console(width=STDOUT_WIDTH, emoji=False)


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, emoji=False)


def emit_json(document: Any) -> None:
    """One JSON document on stdout (every command's ``--format json``)."""
    import json

    sys.stdout.write(json.dumps(document, indent=1, sort_keys=True, default=str) + "\n")


def _unchanged(text: str) -> bool:
    """Rich writes the text as it is: no tab to expand, no control character to strip, no line break."""
    return text.isprintable()


class PlainLines:
    """``say(err, text)`` and ``out.print(text, markup=False, highlight=False)`` of cli/_common, Rich built only
    for a line it would change."""

    def __init__(self) -> None:
        self._out: Console | None = None
        self._err: Console | None = None

    def _write(self, stream: TextIO | None, text: str) -> bool:
        if stream is None or getattr(stream, "rich_proxied_file", None) is not None:  # Rich's own cases
            return False
        try:
            stream.write(text + "\n")
        except UnicodeEncodeError:  # nothing was written; Rich raises it with its hint
            return False
        stream.flush()
        return True

    def err(self, text: str) -> None:
        """``say(err, text)``: one line on stderr, never wrapped."""
        if _unchanged(text) and self._write(sys.stderr, text):
            return
        if self._err is None:
            self._err = stderr_console()
        self._err.print(text, markup=False, highlight=False, soft_wrap=True)

    def out(self, text: str) -> None:
        """``out.print(text, markup=False, highlight=False)``: a line on stdout, which Rich wraps at the console
        width (a terminal's, else STDOUT_WIDTH): plain where stdout is not a terminal and the line cannot reach
        that width (no character takes more than two cells)."""
        if _unchanged(text) and 2 * len(text) <= STDOUT_WIDTH and not sys.stdout.isatty() and \
                self._write(sys.stdout, text):
            return
        if self._out is None:
            self._out = stdout_console()
        self._out.print(text, markup=False, highlight=False)
