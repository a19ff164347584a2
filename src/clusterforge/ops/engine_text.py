"""The engine's output as a person should read it: a dynamic provider's Python traceback becomes one line.

The Pulumi Python dynamic provider hands the engine ``traceback.format_exc()`` when a provider raises
(pulumi/dynamic/__main__.py), so a host that fails its checks showed up as a page of frames ending in
``VerificationFailed: ...``. ``TracebackFolder`` drops the header, every ``File "...", line N`` frame and
its source line, and keeps the exception's own sentence (without its module path) at the indentation the
engine gave the header. Anything that is not a traceback passes through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = ["TracebackFolder", "fold_tracebacks"]

_HEADER = "Traceback (most recent call last):"
_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')
_MARKER = re.compile(r"^\s*[\^~]+\s*$")
_EXCEPTION = re.compile(r"^\s*(?:[A-Za-z_]\w*\.)*(?P<name>[A-Za-z_]\w*)(?::\s?(?P<message>.*))?$")
_MAX_FOLDED = 500  # past this many lines without the exception line, give up and pass lines through


class TracebackFolder:
    def __init__(self) -> None:
        self._prefix: str | None = None
        self._after_frame = False
        self._folded = 0

    def feed(self, line: str) -> list[str]:
        """The lines to show for one line of engine output (none while inside a traceback)."""
        if _HEADER in line:
            self._prefix, self._after_frame, self._folded = line[: line.index(_HEADER)], False, 0
            return []
        if self._prefix is None:
            return [line]
        self._folded += 1
        if self._folded > _MAX_FOLDED:
            self._prefix = None
            return [line]
        if _FRAME.match(line):
            self._after_frame = True
            return []
        if self._after_frame or _MARKER.match(line) or not line.strip():
            self._after_frame = False  # the frame's source line (and any ^^^^ under it)
            return []
        prefix, self._prefix = self._prefix, None
        match = _EXCEPTION.match(line)
        if match is None:
            return [line]
        message = (match["message"] or "").strip()
        return [f"{prefix}{match['name']}: {message}" if message else f"{prefix}{match['name']}"]


def fold_tracebacks(lines: Iterable[str]) -> Iterator[str]:
    folder = TracebackFolder()
    for line in lines:
        yield from folder.feed(line)
