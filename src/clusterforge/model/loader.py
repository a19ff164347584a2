"""Load an inventory YAML (and the catalog files it names) keeping line numbers for every field."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clusterforge.model.checks import semantic_problems
from clusterforge.model.cluster import ClusterSpec, Loc, cross_problems
from clusterforge.model.errors import DeclarationError, Problem, field_path, shown
from clusterforge.model.numbers import number_message
from clusterforge.model.yamlfast import load_plain
from clusterforge.model.yamlsafe import UnsafeInput, parse_yaml, read_declaration_text

__all__ = ["SourceMap", "load_cluster", "load_yaml_with_positions", "MAX_CATALOG_FILES", "MAX_CATALOG_BYTES"]

MAX_CATALOG_FILES = 32
MAX_CATALOG_BYTES = 1 << 20  # all catalog files together (each is also under yamlsafe.MAX_BYTES)


class SourceMap:
    """Maps a field path (as pydantic reports it) to file, line and column."""

    def __init__(self) -> None:
        self._positions: dict[Loc, tuple[str, int, int]] = {}

    def record(self, loc: Loc, file: str, line: int, column: int) -> None:
        self._positions[loc] = (file, line, column)

    def adopt(self, other: SourceMap, prefix: Loc) -> None:
        """Take other's positions at and under prefix (a merged catalog entry: its file's lines)."""
        size = len(prefix)
        for loc, position in other._positions.items():
            if loc[:size] == prefix:
                self._positions[loc] = position

    def locate(self, loc: Loc) -> tuple[str, int, int]:
        """The nearest recorded position: the field itself, else its closest parent."""
        loc = tuple(loc)
        while loc:
            if loc in self._positions:
                return self._positions[loc]
            loc = loc[:-1]
        return self._positions.get((), ("<unknown>", 1, 1))

    def problem(self, loc: Loc, message: str) -> Problem:
        file, line, column = self.locate(loc)
        return Problem(file, line, column, field_path(loc), message)


def _plain(node: Any, loc: Loc, file: str, source: SourceMap) -> Any:
    """Convert ruamel round-trip nodes to plain Python, recording each key's position."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    return _plain_of(node, loc, file, source, CommentedMap, CommentedSeq)


def _plain_of(node: Any, loc: Loc, file: str, source: SourceMap, mapping: type[Any], sequence: type[Any]) -> Any:
    if isinstance(node, mapping):
        out: dict[str, Any] = {}
        for key, value in node.items():
            line, col = node.lc.key(key)
            if not isinstance(key, str):  # null, true, 3: a field name is text (pydantic would say 1:1)
                raise DeclarationError([Problem(file, line + 1, col + 1, field_path(loc),
                                                f"a key must be a field name (text); got {shown(key)}")])
            source.record((*loc, key), file, line + 1, col + 1)
            out[key] = _plain_of(value, (*loc, key), file, source, mapping, sequence)
        return out
    if isinstance(node, sequence):
        items: list[Any] = []
        for index, value in enumerate(node):
            line, col = node.lc.item(index)
            source.record((*loc, index), file, line + 1, col + 1)
            items.append(_plain_of(value, (*loc, index), file, source, mapping, sequence))
        return items
    if isinstance(node, str):
        return str(node)
    return node


def load_yaml_with_positions(path: Path, loc: Loc, source: SourceMap) -> Any:
    """Read and parse one file under the limits of yamlsafe; every failure is a located Problem.

    libyaml reads it (yamlfast) when it can vouch for the result; otherwise, and for every error, ruamel does.
    """
    name = str(path)
    try:
        text = read_declaration_text(path)
    except OSError as exc:
        raise DeclarationError([Problem(name, 1, 1, "", f"cannot read file: {exc.strerror or exc}")]) from None
    except UnsafeInput as exc:
        raise DeclarationError([Problem(name, exc.line, exc.column, "", exc.message)]) from None
    fast = load_plain(text, loc)
    if fast is not None:
        data, positions = fast
        source.record(loc, name, 1, 1)
        for at, line, column in positions:
            source.record(at, name, line, column)
        return data
    return _parse_reference(text, name, loc, source)


def _parse_reference(text: str, name: str, loc: Loc, source: SourceMap) -> Any:
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        document = parse_yaml(text)
    except UnsafeInput as exc:
        raise DeclarationError([Problem(name, exc.line, exc.column, "", exc.message)]) from None
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        raise DeclarationError(
            [Problem(name, mark.line + 1, mark.column + 1, "", f"duplicate key: {shown(exc.problem)}")]
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise DeclarationError([Problem(name, line, col, "", f"YAML syntax: {exc.problem or exc.context}")]) from None
    except (YAMLError, RecursionError) as exc:  # reader errors carry no mark
        raise DeclarationError([Problem(name, 1, 1, "", f"not readable as YAML: {type(exc).__name__}")]) from None
    source.record(loc, name, 1, 1)
    return _plain(document, loc, name, source)


def _catalog_path(base: Path, relative: Any) -> tuple[Path | None, str]:
    """(path, "") for a catalog file inside the inventory's directory, else (None, why)."""
    text = str(relative)
    allowed = "a relative path to a regular file inside the inventory's directory"
    if not isinstance(relative, str) or not text or text.startswith(("/", "~")) or "\0" in text:
        return None, f"expected {allowed}"
    root = base.resolve()
    lexical = Path(os.path.normpath(base / text))
    try:
        lexical.relative_to(os.path.normpath(base))
        path = (base / text).resolve(strict=True)
        path.relative_to(root)
    except ValueError:
        return None, f"leaves the inventory's directory; expected {allowed}"
    except (OSError, RuntimeError) as exc:  # missing, symlink loop
        return None, f"catalog file not readable: {getattr(exc, 'strerror', None) or exc}"
    if not path.is_file():  # a directory, FIFO or device: refused here, at the entry that names it
        return None, f"not a regular file; expected {allowed}"
    return path, ""


def _merge_catalog(data: dict, base: Path, source: SourceMap, problems: list[Problem]) -> None:
    catalog = data.setdefault("catalog", {})
    if not isinstance(catalog, dict):
        return
    files = data.get("catalog_files", [])
    if not isinstance(files, list):
        return
    if len(files) > MAX_CATALOG_FILES:  # counted before any file is opened
        problems.append(source.problem(("catalog_files", MAX_CATALOG_FILES),
                                       f"{len(files)} catalog files; at most {MAX_CATALOG_FILES} are read"))
        return
    budget = MAX_CATALOG_BYTES
    from_files: dict[tuple[str, str], str] = {}  # (section, name) -> the catalog file that declared it
    for index, relative in enumerate(files):
        path, why = _catalog_path(base, relative)
        if path is None:
            problems.append(source.problem(("catalog_files", index), why))
            continue
        size = path.stat().st_size
        if size > budget:  # the files' sizes together, checked before the one that would pass it is read
            reached = MAX_CATALOG_BYTES - budget + size
            problems.append(source.problem(("catalog_files", index), f"the catalog files reach {reached} bytes"
                                           f" with this one; at most {MAX_CATALOG_BYTES} in all"))
            return
        budget -= size
        part_source = SourceMap()  # inline entries win, and keep their own lines
        try:
            part = load_yaml_with_positions(path, ("catalog",), part_source)
        except DeclarationError as exc:
            problems.extend(exc.problems)
            continue
        if not isinstance(part, dict):
            problems.append(source.problem(("catalog_files", index), "a catalog file must be a mapping"))
            continue
        for section, entries in part.items():
            if not isinstance(entries, dict):
                problems.append(part_source.problem(("catalog", section), "a catalog section maps model names to"
                                                    " models; got a " + type(entries).__name__))
                continue
            if section not in catalog:
                source.adopt(part_source, ("catalog", section))
                catalog[section] = {}
            target = catalog[section]
            if isinstance(target, dict):
                for name, entry in entries.items():
                    first = from_files.get((section, name))
                    if first is not None:  # two files, one name: neither may win silently
                        problems.append(part_source.problem(("catalog", section, name),
                                                            f"duplicate catalog entry (also in {first})"))
                        continue
                    from_files[(section, name)] = str(relative)
                    if name not in target:  # inline entries override files
                        target[name] = entry
                        source.adopt(part_source, ("catalog", section, name))


def _message(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown field (not in the schema; check spelling)"
    if kind == "missing":
        return "required field is missing"
    if kind == "literal_error":
        return f"{error['msg']}; got {shown(error.get('input'))}"
    message = error["msg"]
    if kind in ("int_type", "float_type"):  # model.numbers: a YAML habit where a number belongs, in plain words
        message = number_message("integer" if kind == "int_type" else "number", error.get("input")) or message
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    if "password" in error.get("loc", ()):  # what was written where a password reference belongs is not echoed
        return message
    if "input" in error and kind not in ("model_type", "dict_type"):
        return f"{message} (got {shown(error['input'])})"
    return message


def load_cluster(path: str | Path) -> tuple[ClusterSpec, SourceMap]:
    """Load and validate; raises DeclarationError listing every problem with file:line:col."""
    path = Path(path)
    source = SourceMap()
    data = load_yaml_with_positions(path, (), source)
    if not isinstance(data, dict):
        raise DeclarationError([source.problem((), "an inventory must be a YAML mapping")])
    problems: list[Problem] = []
    _merge_catalog(data, path.parent, source, problems)
    if problems:
        raise DeclarationError(problems)
    try:
        spec = ClusterSpec.model_validate(data)
    except ValidationError as exc:
        problems = [source.problem(tuple(err["loc"]), _message(err)) for err in exc.errors()]
        raise DeclarationError(_dedupe(problems)) from None
    problems = [source.problem(loc, message) for loc, message in cross_problems(spec) + semantic_problems(spec)]
    if problems:
        raise DeclarationError(problems)
    return spec, source


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen, out = set(), []
    for problem in problems:
        if str(problem) not in seen:
            seen.add(str(problem))
            out.append(problem)
    return out
