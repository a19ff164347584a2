"""Deterministic YAML text for rendered files: PyYAML's safe block layout, written without its representer.

`to_yaml(data)` is byte-identical to

    yaml.dump(data, Dumper=CSafeDumper, sort_keys=False, default_flow_style=False, width=4096,
              explicit_start=True)

and `to_yaml(data, width=W, explicit_start=False)` to the same dump with those two arguments (containerlab's
clab.yml: width 120, no ``---``); a document with a line PyYAML might fold (longer than the width, with a
space or a double-quoted scalar) is PyYAML's.

(tests/unit/test_yamltext.py compares them on generated values). PyYAML's representer is pure
Python and was most of the Ansible-tree render time at scale; this writer handles what host_vars
and inventories hold — mappings with plain keys, lists, str/int/bool/None — and hands anything
else (floats, tuples, long or multi-line strings, a container that appears twice) to PyYAML for
the whole document. A string is written plain exactly when PyYAML would: its characters are safe
for a plain scalar (letters, digits and ``_./+@-``; inside it also a space or a ``:`` that neither
ends it nor is followed by a space: `ip link set dev eth0 up`, `leaf-01:eth1`) and no implicit
resolver (int, float, bool, null, timestamp...) claims it; otherwise PyYAML writes that one scalar
(cached per value).

``to_ansible_yaml`` is for files Ansible reads (inventory, host_vars): any string that could open a
Jinja2 expression (it contains ``{``) is written with Ansible's ``!unsafe`` tag, so Ansible never
templates it (such a document is dumped by PyYAML). The declaration's grammars already refuse
``{{``/``{%``/``{#``; this is the second wall. ``UnsafeTolerantLoader`` reads such files back.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["to_yaml", "to_ansible_yaml", "UnsafeTolerantLoader", "UNSAFE_TAG"]

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
UNSAFE_TAG = "!unsafe"


class _AnsibleDumper(_Dumper):  # type: ignore[misc, valid-type]
    pass


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    if "{" in value:
        return dumper.represent_scalar(UNSAFE_TAG, value, style="'")
    return dumper.represent_str(value)


_AnsibleDumper.add_representer(str, _represent_str)


class UnsafeTolerantLoader(_Loader):  # type: ignore[misc, valid-type]
    """A safe loader that reads Ansible's ``!unsafe`` scalars as the plain strings they carry."""


UnsafeTolerantLoader.add_constructor(UNSAFE_TAG, lambda loader, node: loader.construct_scalar(node))


_PLAIN = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_./+@-]*\Z")  # no indicator first, no ': ', ' #', space, quote
# block context also takes a space or ':' inside (no ': ', no ':' or ' ' last: checked in _plain); never a key
_PLAIN_VALUE = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_./+@: -]*\Z")
_RESOLVERS = yaml.resolver.Resolver.yaml_implicit_resolvers
_LONGEST = 1024  # longer strings go to PyYAML (line folding)
_SIMPLE_KEY = 128  # PyYAML writes longer keys as complex keys
_CACHED = 131_072  # strings and keys whose text is remembered (the first ones seen): values repeat across hosts
_TEXTS: dict[str, str] = {}  # string -> its text (plain or quoted)
_KEYS: set[str] = set()  # keys known to be written plain


class _Fallback(Exception):
    """Something this writer does not format exactly like PyYAML: dump the document with PyYAML."""


def _pyyaml(data: Any, dumper: type = _Dumper, width: int = 4096, explicit_start: bool = True) -> str:
    return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, width=width,
                     explicit_start=explicit_start)


def to_yaml(data: Any, width: int = 4096, explicit_start: bool = True) -> str:
    return _write(data, _Dumper, width, explicit_start)


def to_ansible_yaml(data: Any) -> str:
    return _write(data, _AnsibleDumper)


def _write(data: Any, dumper: type, width: int = 4096, explicit_start: bool = True) -> str:
    if type(data) is not dict or not data:
        return _pyyaml(data, dumper, width, explicit_start)
    out = ["---\n"] if explicit_start else []
    try:
        _mapping(data, "", None, out, set(), dumper is _AnsibleDumper, width)
    except _Fallback:
        return _pyyaml(data, dumper, width, explicit_start)
    return "".join(out)


def _may_fold(text: str) -> bool:
    """PyYAML may fold a line longer than the width that ends in this scalar's text: a space to break at (plain,
    single-quoted) or a double-quoted scalar (which breaks anywhere)."""
    return " " in text or text[:1] == '"'


def _plain(text: str) -> bool:
    if not _PLAIN.match(text) and (not _PLAIN_VALUE.match(text) or ": " in text or text[-1] in ": "):
        return False
    resolvers = (*_RESOLVERS.get(text[0], ()), *_RESOLVERS.get(None, ()))
    return not any(regexp.match(text) for _, regexp in resolvers)


def _string(text: str, ansible: bool) -> str:
    known = _TEXTS.get(text)  # never a string with "{" (its text depends on `ansible`) nor a long one
    if known is not None:
        return known
    if len(text) > _LONGEST or (ansible and "{" in text):  # !unsafe: PyYAML's Ansible dumper
        raise _Fallback
    if text and _plain(text):
        written = text
    else:
        if "\n" in text or "\r" in text:
            raise _Fallback
        dumped = yaml.dump(text, Dumper=_Dumper, width=4096)
        written = dumped.removesuffix("\n...\n").removesuffix("\n")
        if not written or "\n" in written:
            raise _Fallback
    if "{" not in text and len(_TEXTS) < _CACHED:
        _TEXTS[text] = written
    return written


def _scalar(value: Any, ansible: bool) -> str | None:
    kind = type(value)
    if kind is str:
        return _string(value, ansible)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is dict or kind is list:
        return None
    raise _Fallback  # floats, tuples, subclasses: PyYAML's own rules


def _key(key: Any) -> str:
    if type(key) is str and key in _KEYS:  # keys repeat in every host's file
        return key
    if type(key) is not str or not key or len(key) >= _SIMPLE_KEY or not _PLAIN.match(key) or not _plain(key):
        raise _Fallback
    if len(_KEYS) < _CACHED:
        _KEYS.add(key)
    return key


def _mapping(data: dict, indent: str, first: str | None, out: list[str], seen: set[int], ansible: bool,
             width: int) -> None:
    """Block mapping at `indent`; its first line starts with `first` ("- " items) when given."""
    if id(data) in seen:
        raise _Fallback  # PyYAML would write an anchor and an alias
    seen.add(id(data))
    for i, (key, value) in enumerate(data.items()):
        lead = first if i == 0 and first is not None else indent
        text = _scalar(value, ansible)
        if text is not None:
            line = f"{lead}{_key(key)}: {text}\n"
            if len(line) > width and _may_fold(text):
                raise _Fallback
            out.append(line)
        elif not value:
            out.append(f"{lead}{_key(key)}: {'{}' if type(value) is dict else '[]'}\n")
        elif type(value) is dict:
            out.append(f"{lead}{_key(key)}:\n")
            _mapping(value, indent + "  ", None, out, seen, ansible, width)
        else:
            out.append(f"{lead}{_key(key)}:\n")
            _sequence(value, indent, out, seen, ansible, width)


def _sequence(items: list, indent: str, out: list[str], seen: set[int], ansible: bool, width: int) -> None:
    """Block sequence whose dashes sit at `indent` (PyYAML does not indent a mapping's sequences)."""
    if id(items) in seen:
        raise _Fallback
    seen.add(id(items))
    for item in items:
        text = _scalar(item, ansible)
        if text is not None:
            line = f"{indent}- {text}\n"
            if len(line) > width and _may_fold(text):
                raise _Fallback
            out.append(line)
        elif not item:
            out.append(f"{indent}- {'{}' if type(item) is dict else '[]'}\n")
        elif type(item) is dict:
            _mapping(item, indent + "  ", f"{indent}- ", out, seen, ansible, width)
        else:
            raise _Fallback  # a list in a list: rare; PyYAML's layout
