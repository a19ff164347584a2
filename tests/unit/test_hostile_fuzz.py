"""Fuzz targets for two input surfaces, the declaration and the catalog files: mutated examples through validate
and render. Whatever the bytes, the answer is exit 0 or 1, never an exception, a location on every error line,
and nothing written outside --out. Each target has a fixed budget of examples (derandomized: the same examples
every run, so `make test` stays bounded); CF_FUZZ_EXAMPLES=N runs N per target with fresh randomness.
The third surface, command-line arguments, is tests/unit/test_fuzz_cli.py."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hostile_fixtures import ROOT, run_cli, workdir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = {name: (ROOT / "inventory" / f"{name}.yaml").read_text()
            for name in ("lab", "roce-128gpu", "superpod-4su", "device-h200x2", "catalog/servers",
                         "catalog/switches", "catalog/pdus")}
RENDERED = ("lab", "device-h200x2")  # render only the small ones: bounded time per example
HOSTILE_VALUES = [
    "", "-1", "0", "1e308", "-1e308", ".inf", "-.inf", ".nan", "null", "~", "[]", "{}", "[[[[[[]]]]]]", "true",
    "999999999999999999999999999999", "'{{ lookup(\"pipe\", \"id\") }}'", "\"a\\nb: c\"", "\"\\x00\"", "\"\\e[2J\"",
    "fd00::/64", "224.0.0.0/4", "127.0.0.0/8", "10.0.0.1/8", "0.0.0.0/0", "255.255.255.255/32", "10.0.0.0/33",
    "!!python/object/apply:os.system ['id']", "!custom x", "&a x", "*a", "<<", "{<<: {a: 1}}", "'=cmd|calc!A0'",
    "/etc/passwd", "../../../etc/passwd", "x" * 5000, "'日本語'", "\"\\u2028\"", "- a\n- b", "|\n  a\n  b",
    # issue 26's classes: prefixes past /32, YAML 1.1 booleans and quoted numbers as counts, the default QoS
    # class, system mount points, kernel and planned NIC names, CUDA releases that do not exist
    "198.18.0.0/33", "10.0.0.0/99", "yes", "no", "off", "\"4\"", "/usr", "/proc", "/", "/mnt", "lo", "bond0",
    "\"12.7\"", "\"99.0\"", "../../../ESCAPED",
]
BYTES = [b"\x00", b"\xff", b"\xfe\xff", b"\x1b", b"\r", b"\t", b"\n", b":", b"- ", b"{", b"[", b"'", b'"', b"&", b"*",
         b"!", b"%", b"@", b"`", b"#", b"|", b">", b"\xc3", b"\xe2\x80\xa8"]


@st.composite
def mutated(draw, names: list[str]) -> tuple[str, bytes]:
    name = draw(st.sampled_from(names))
    lines = EXAMPLES[name].encode().split(b"\n")
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["value", "value", "value", "delete", "duplicate", "bytes", "indent", "truncate"]))
        line = lines[index]
        if kind == "value" and b":" in line:
            key = line.split(b":", 1)[0]
            lines[index] = key + b": " + draw(st.sampled_from(HOSTILE_VALUES)).encode()
        elif kind == "delete":
            del lines[index]
        elif kind == "duplicate":
            lines.insert(index, line)
        elif kind == "bytes":
            at = draw(st.integers(0, len(line)))
            lines[index] = line[:at] + draw(st.sampled_from(BYTES)) + line[at:]
        elif kind == "indent":
            lines[index] = draw(st.sampled_from([b" ", b"  ", b"\t", b""])) + line.lstrip()
        elif kind == "truncate":
            lines = lines[: index + 1]
        if not lines:
            lines = [b""]
    return name, b"\n".join(lines)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return workdir(tmp_path_factory.mktemp("fuzz"))


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*")
            if p.is_file() and not p.relative_to(directory).parts[0].startswith("out")}


FRESH = "CF_FUZZ_EXAMPLES" in os.environ


def _budget(default: int):
    return settings(max_examples=int(os.environ.get("CF_FUZZ_EXAMPLES", default)), deadline=None, database=None,
                    derandomize=not FRESH, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _check(fuzz_dir: Path, capsys, name: str, data: bytes) -> None:
    shutil.rmtree(fuzz_dir / "catalog")
    shutil.copytree(ROOT / "inventory" / "catalog", fuzz_dir / "catalog")
    path = fuzz_dir / "case.yaml"
    if name.startswith("catalog/"):  # a mutated catalog file under an intact lab.yaml
        (fuzz_dir / f"{name}.yaml").write_bytes(data)
        path.write_text(EXAMPLES["lab"])
    else:
        path.write_bytes(data)
    before = _snapshot(fuzz_dir)
    commands = [["validate", str(path)]]
    if name in RENDERED or name.startswith("catalog/"):
        commands.append(["render", str(path), "--out", str(fuzz_dir / "out")])
    for command in commands:
        outcome = run_cli(capsys, *command)  # an exception here fails the test with its traceback
        assert outcome.code in (0, 1), (command, outcome.code, outcome.err[-3000:])
        assert "Traceback" not in outcome.err + outcome.out
        if outcome.code == 1:
            assert outcome.problems and all(outcome.problems), f"unlocated: {outcome.err[-3000:]}"
            assert all(m["file"] in (str(path),) or m["file"].startswith(str(fuzz_dir / "catalog"))
                       for m in outcome.problems), outcome.err[-3000:]
    assert _snapshot(fuzz_dir) == before  # nothing written beside --out (no stage dir left, no stray files)
    assert not [p for p in fuzz_dir.iterdir() if p.name.startswith(".out")]


DECLARATIONS = sorted(n for n in EXAMPLES if not n.startswith("catalog/"))
CATALOGS = sorted(n for n in EXAMPLES if n.startswith("catalog/"))


@_budget(25)
@given(case=mutated(DECLARATIONS))
def test_fuzz_declaration(fuzz_dir: Path, capsys, case):
    _check(fuzz_dir, capsys, *case)


@_budget(10)
@given(case=mutated(CATALOGS))
def test_fuzz_catalog_files(fuzz_dir: Path, capsys, case):
    _check(fuzz_dir, capsys, *case)
