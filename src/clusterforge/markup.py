"""Text from a declaration or a command line placed into Markdown or HTML: the one set of escapes every writer of a
pull-request comment uses (plan/diff.py's Markdown, review_comment.py's comment), so a file name with ``-->``,
backticks, ``|``, ``<`` or a newline reads as that name and never closes a comment, a code span, a fence or a table
cell, or adds markup.

* ``text``: Markdown inline text: its markup punctuation backslash-escaped (CommonMark 2.4), control
  characters shown as escapes;
* ``code``: an inline code span (CommonMark 6.1): a backtick fence longer than any run of backticks inside,
  padded with a space where the text starts or ends with one; ``|`` escaped in table cells (GFM tables split
  cells on it, inside code spans too); control characters, newlines among them, shown as escapes (``\\n``).
* ``fenced``: a fenced code block (CommonMark 4.5) whose fence is longer than any backtick run in its lines.
* ``html``: text in HTML (and Markdown) markup: ``& < > " '`` as entities, control characters as escapes.
* ``comment``: text inside an HTML comment (``<!-- ... -->``): every character outside a plain set
  percent-encoded, so no ``-->``, ``--!>`` or ``<!--`` can form; the same name always gives the same text.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Iterable
from urllib.parse import quote

__all__ = ["text", "code", "fenced", "html", "comment", "one_line"]

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_BACKTICKS = re.compile("`+")
_MARKUP = re.compile(r"([\\`*_\[\]<>#!|~&])")


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def one_line(text: str, tabs: bool = False) -> str:
    """text with every control character (newline, escape, bidi override; tab unless tabs) shown as its escape."""
    if tabs:
        return "\t".join(_CONTROL.sub(_escape, part) for part in str(text).split("\t"))
    return _CONTROL.sub(_escape, str(text))


def text(value: object) -> str:
    """value as Markdown inline text (also in a table cell): no emphasis, link, HTML, entity or cell break."""
    return _MARKUP.sub(r"\\\1", one_line(str(value)))


def code(value: object, table: bool = False) -> str:
    """An inline code span showing value as it is (on one line)."""
    body = one_line(str(value))
    if table:
        body = body.replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * (longest + 1)
    if body.startswith("`") or body.endswith("`") or (body.startswith(" ") and body.endswith(" ") and body.strip()):
        body = f" {body} "
    return f"{fence}{body or ' '}{fence}"


def fenced(lines: Iterable[str], info: str = "") -> list[str]:
    """A fenced code block of lines (each on its line, tabs kept, other control characters shown escaped)."""
    body = [one_line(line, tabs=True) for line in lines]
    longest = max((len(run) for line in body for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + one_line(info).replace("`", ""), *body, fence]


def html(value: object) -> str:
    """value as HTML character data or an attribute value."""
    return _html.escape(one_line(str(value)), quote=True)


def comment(value: object) -> str:
    """value inside an HTML comment: letters, digits and ``/ . _ - ~ : @ + = ,`` as they are, the rest
    percent-encoded (UTF-8)."""
    return quote(str(value), safe="/:@+=,~")
