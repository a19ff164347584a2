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
  while composing, before any Python object is built;
* an integer of more than ``MAX_INTEGER_DIGITS`` digits is refused where it is written, before Python
  converts it (Python refuses past 4,300 digits, and no field takes a number near that size).

Failures raise ``UnsafeInput`` with a 1-based line and column.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "MAX_INTEGER_DIGITS", "UnsafeInput", "read_declaration_text",
           "parse_yaml", "oversized_integer"]

MAX_BYTES = 256 * 1024  # 256 KiB: the largest example inventory is 4 KB, the whole catalog 9 KB
MAX_DEPTH = 32  # the schema nests 6 deep
MAX_NODES = 20_000  # scalars + mappings + sequences in one file; the examples have 190-350
MAX_INTEGER_DIGITS = 32  # the largest bound of any number field is 13 digits (1e12); int() stops at 4,300
# A plain scalar YAML 1.2 reads as an integer, as ruamel resolves it (ruamel/yaml/resolver.py, (1, 2))
_INTEGER = re.compile(r"[-+]?(?:0b[0-1_]+|0o?[0-7_]+|[0-9_]+|0x[0-9a-fA-F_]+)\Z")
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
    if isinstance(text, bytes):
        raw = text[:offset]
        return raw.count(b"\n") + 1, offset - (raw.rfind(b"\n") + 1) + 1
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


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


def oversized_integer(plain: str) -> str | None:
    """Why a plain scalar is refused as an integer too long to read, or None."""
    if len(plain) <= MAX_INTEGER_DIGITS or not _INTEGER.match(plain):
        return None
    digits = sum(ch.isalnum() for ch in plain)
    if digits <= MAX_INTEGER_DIGITS:
        return None
    return f"an integer of {digits} digits; no field takes more than {MAX_INTEGER_DIGITS}"


def parse_yaml(text: str) -> Any:
    """Round-trip parse (line numbers kept) under the limits; ruamel's own errors propagate.

    ruamel is imported here, not at start-up: a declaration the fast path reads (yamlfast) never needs it.
    """
    from clusterforge.model.yamlrt import parse_bounded

    return parse_bounded(text)
