"""Bounded reading and parsing of declaration files: a declaration arrives in a pull request, so it is hostile.

Every limit here is checked before the expensive step it guards, so any input is answered within
seconds and a small, fixed amount of memory (see docs/LIMITS.md for the measured worst cases):

* only regular files are read (a named pipe, device or directory is refused without opening it
  for a blocking read), at most ``MAX_BYTES``;
* the bytes must be UTF-8 and free of control characters other than tab and newline, and of
  bidirectional overrides (a reviewer must read what loads);
* YAML anchors/aliases, merge keys (``<<``) and explicit tags (``!!python/...``, ``!custom``) are
  refused: a declaration is plain data and reads the same in review as it loads;
* nesting deeper than ``MAX_DEPTH`` and documents of more than ``MAX_NODES`` nodes are refused
  while composing, before any Python object is built.

Failures raise ``UnsafeInput`` with a 1-based line and column.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "UnsafeInput", "read_declaration_text", "parse_yaml"]

MAX_BYTES = 256 * 1024  # 256 KiB: the largest example inventory is 4 KB, the whole catalog 9 KB
MAX_DEPTH = 32  # the schema nests 6 deep
MAX_NODES = 20_000  # scalars + mappings + sequences in one file; the examples have 190-350
_MERGE_TAG = "tag:yaml.org,2002:merge"
# C0 controls except tab/LF/CR, DEL, C1 controls, the Unicode line/paragraph separators, and the
# bidirectional overrides/isolates that make reviewed text read differently from what loads (CVE-2021-42574)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_KIND = {stat.S_IFIFO: "a named pipe", stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device",
         stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


class UnsafeInput(Exception):
    """A file refused before or while parsing; line and column are 1-based."""

    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


def _position(text: str | bytes, offset: int) -> tuple[int, int]:
    newline = "\n" if isinstance(text, str) else b"\n"
    before = text[:offset]
    line = before.count(newline) + 1
    return line, offset - (before.rfind(newline) + 1) + 1


def read_declaration_text(path: Path) -> str:
    """The file's text, or UnsafeInput: not a regular file, too large, not UTF-8, control characters.

    OSError (missing, unreadable, symlink loop) propagates for the caller to word.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)  # O_NONBLOCK: opening a FIFO without a writer returns at once
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _KIND.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise UnsafeInput(f"{kind}; only regular files are read")
        if info.st_size > MAX_BYTES:
            raise UnsafeInput(f"file is {info.st_size} bytes; the limit is {MAX_BYTES} bytes")
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, MAX_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_BYTES:  # grew while we read, or a file that reports no size
        raise UnsafeInput(f"file is over the limit of {MAX_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(data, exc.start)
        raise UnsafeInput(f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded", line, column) from None
    text = text.removeprefix("\ufeff")
    bad = _CONTROL.search(text)
    if bad:
        line, column = _position(text, bad.start())
        raise UnsafeInput(f"control character U+{ord(bad.group()):04X} is not allowed (only tab and newline)",
                          line, column)
    return text


class _BoundedComposer(Composer):
    """ruamel's composer, refusing aliases, anchors, explicit tags, merge keys, depth and size past the limits."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._depth = 0
        self._nodes = 0

    def _refuse(self, event: Any, message: str) -> None:
        mark = event.start_mark
        raise UnsafeInput(message, mark.line + 1, mark.column + 1)

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent):
            self._refuse(event, f"YAML alias *{event.anchor} is not allowed; write the value out")
        if event.anchor is not None:
            self._refuse(event, f"YAML anchor &{event.anchor} is not allowed; write the value out")
        if isinstance(event, ScalarEvent | SequenceStartEvent | MappingStartEvent):
            tag = event.ctag
            if tag is not None and str(tag) != "!":
                self._refuse(event, f"explicit YAML tag {str(tag)!r} is not allowed; a declaration is plain data")
        self._nodes += 1
        if self._nodes > MAX_NODES:
            self._refuse(event, f"more than {MAX_NODES} YAML nodes in one file")
        self._depth += 1
        if self._depth > MAX_DEPTH:
            self._refuse(event, f"nested deeper than {MAX_DEPTH} levels")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_mapping_node(self, anchor: Any) -> Any:
        node = super().compose_mapping_node(anchor)
        for key, _ in node.value:
            if str(key.tag) == _MERGE_TAG:
                raise UnsafeInput("YAML merge key '<<' is not allowed; write the keys out",
                                  key.start_mark.line + 1, key.start_mark.column + 1)
            if not hasattr(key, "value") or isinstance(key.value, list):
                raise UnsafeInput("a mapping key must be a plain scalar",
                                  key.start_mark.line + 1, key.start_mark.column + 1)
        return node


def parse_yaml(text: str) -> Any:
    """Round-trip parse (line numbers kept) under the limits; ruamel's own errors propagate."""
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    yaml.Composer = _BoundedComposer
    return yaml.load(text)
